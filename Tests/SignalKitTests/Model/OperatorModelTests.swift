// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import SignalKit
import SignalKitTesting
import Testing

// The randomized model test: random chains of operators over scripted
// sources, driven by random event sequences on virtual time. After every
// stage of every chain a checker verifies the event grammar
// value* (error | completion)? and that nothing arrives after termination;
// at the end of a trial every subscription made anywhere in the chain (to a
// scripted source or to a stage) has been disposed exactly once, and the
// final callbacks have been released. A quarter of the trials end instead by
// abandoning the subscription (handle dropped undisposed, every source drops
// its subscriber): the final callbacks must be released then too, which no
// operator's internal reference cycle may prevent.
//
// Reproducible: the whole trial derives from one seed, printed in every
// failure message. To replay one, set SIGNALKIT_MODEL_SEED=<seed>.

@Suite struct OperatorModelTests {
    @Test func randomChainsKeepTheEventContract() {
        let trials = 3000
        if let seed = Environment.modelSeed {
            runModelTrial(seed: seed)
            return
        }
        var seeds = SplitMix64(seed: 0x5167_4e41_4c4b_4954)
        var total = TrialOutcome()
        for _ in 0..<trials {
            total.add(runModelTrial(seed: seeds.next()))
        }
        // The trials must exercise what they check: values reach the end of
        // chains, chains end every way, subscriptions get made.
        #expect(total.values > trials * 2)
        #expect(total.errors > trials / 20)
        #expect(total.completions > trials / 20)
        #expect(total.unterminated > trials / 20)
        #expect(total.subscriptions > trials * 3)
        #expect(total.abandoned > trials / 10)
    }
}

enum Environment {
    static var modelSeed: UInt64? {
        guard let text = getenv("SIGNALKIT_MODEL_SEED") else { return nil }
        return UInt64(String(cString: text))
    }
}

// MARK: - Randomness

/// A tiny seeded generator (SplitMix64): the same seed, the same trial.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// The trial's state, shared by the sources, the checkers and the driver.
/// Everything runs on the test's thread (virtual time runs work inline), so
/// there is no locking.
final class ModelWorld: @unchecked Sendable {
    let seed: UInt64
    var random: SplitMix64
    let scheduler = VirtualTimeScheduler()
    let queue: Queue
    /// Every subscription ever made to a scripted source.
    var runs: [SourceRun] = []
    /// Every subscription ever made through a checker.
    var checks: [CheckRun] = []
    var nextValue = 0

    init(seed: UInt64) {
        self.seed = seed
        self.random = SplitMix64(seed: seed)
        self.queue = scheduler.makeQueue(name: "model")
    }

    func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &random) < percent }
    func pick(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

    func fail(_ message: String, sourceLocation: SourceLocation = #_sourceLocation) {
        Issue.record("seed \(seed): \(message)", sourceLocation: sourceLocation)
    }

    func freshValue() -> Int {
        nextValue += 1
        return nextValue
    }
}

struct ModelError: Error, Equatable {
    let code: Int
}

/// One subscription to a scripted source.
final class SourceRun: @unchecked Sendable {
    let name: String
    var subscriber: Subscriber<Int, ModelError>?
    var terminated = false
    var disposeCount = 0

    init(name: String, subscriber: Subscriber<Int, ModelError>) {
        self.name = name
        self.subscriber = subscriber
    }

    var isLive: Bool { !terminated && disposeCount == 0 }
}

/// A cold source whose events the driver sends (and, with some probability,
/// a few sent synchronously from the generator).
func scriptedSource(_ world: ModelWorld, _ name: String) -> Signal<Int, ModelError> {
    Signal { subscriber in
        let run = SourceRun(name: "\(name)#\(world.runs.count)", subscriber: subscriber)
        world.runs.append(run)
        if world.chance(25) {
            for _ in 0..<world.pick(0...3) {
                subscriber.putNext(world.freshValue())
            }
            if world.chance(40) {
                run.terminated = true
                if world.chance(50) {
                    subscriber.putCompletion()
                } else {
                    subscriber.putError(ModelError(code: world.freshValue()))
                }
            }
        }
        return ActionDisposable {
            run.disposeCount += 1
            if run.disposeCount > 1 { world.fail("\(run.name) disposed \(run.disposeCount) times") }
        }
    }
}

/// One subscription through a checker stage.
final class CheckRun: @unchecked Sendable {
    let name: String
    var terminated = false
    var disposeCount = 0

    init(name: String) { self.name = name }
}

/// Passes events through, failing the trial on any grammar violation, and
/// counts its own disposals.
func checked(_ world: ModelWorld, _ name: String) -> (Signal<Int, ModelError>) -> Signal<Int, ModelError> {
    { upstream in
        Signal { subscriber in
            let run = CheckRun(name: "\(name)#\(world.checks.count)")
            world.checks.append(run)
            let handle = upstream.start(
                next: { value in
                    if run.terminated { world.fail("\(run.name): value \(value) after termination") }
                    if run.disposeCount > 0 { world.fail("\(run.name): value \(value) after disposal") }
                    subscriber.putNext(value)
                },
                error: { error in
                    if run.terminated { world.fail("\(run.name): error after termination") }
                    run.terminated = true
                    subscriber.putError(error)
                },
                completed: {
                    if run.terminated { world.fail("\(run.name): completion after termination") }
                    run.terminated = true
                    subscriber.putCompletion()
                }
            )
            return ActionDisposable {
                run.disposeCount += 1
                if run.disposeCount > 1 { world.fail("\(run.name) disposed \(run.disposeCount) times") }
                handle.dispose()
            }
        }
    }
}

// MARK: - Operators

typealias ModelOperator = @Sendable (ModelWorld) -> (name: String, apply: (Signal<Int, ModelError>) -> Signal<Int, ModelError>)

/// The unary operators a chain is built from. Operators with a second
/// input get a fresh scripted source (itself checked).
let modelOperators: [ModelOperator] = [
    { _ in ("map", map { $0 &* 3 }) },
    { _ in ("filter", filter { $0 % 3 != 1 }) },
    { _ in ("distinctUntilChanged", { $0 |> map { $0 / 2 } |> distinctUntilChanged }) },
    { world in
        let count = world.pick(0...3)
        return ("take(\(count))", take(count))
    },
    { _ in ("take(until:)", take(until: { SignalTakeAction(passthrough: true, complete: $0 % 5 == 0) })) },
    { _ in ("takeLast", { takeLast($0) }) },
    { _ in ("last", { last(signal: $0) |> map { $0 ?? -1 } }) },
    { _ in ("reduceLeft", reduceLeft(value: 0, f: { $0 &+ $1 })) },
    { _ in ("mapError", { $0 |> mapError { ModelError(code: $0.code &+ 1) } }) },
    { _ in ("beforeNext", beforeNext { _ in }) },
    { _ in ("afterNext", afterNext { _ in }) },
    { _ in ("beforeStarted", beforeStarted {}) },
    { _ in ("beforeCompleted", beforeCompleted {}) },
    { _ in ("afterCompleted", afterCompleted {}) },
    { _ in ("afterDisposed", afterDisposed {}) },
    { world in ("deliverOn", deliverOn(world.queue)) },
    { world in ("runOn", runOn(world.queue)) },
    { world in ("delay", delay(Double(world.pick(1...3)), queue: world.queue)) },
    { world in
        let fallback = scriptedSource(world, "timeoutFallback") |> checked(world, "timeoutFallback")
        return ("timeout", timeout(Double(world.pick(1...5)), queue: world.queue, alternate: fallback))
    },
    { world in
        let other = scriptedSource(world, "combineLatestInput") |> checked(world, "combineLatestInput")
        return ("combineLatest", { combineLatest($0, other) |> map { $0 &+ $1 } })
    },
    { world in
        let other = scriptedSource(world, "combineLatestQueueInput") |> checked(world, "combineLatestQueueInput")
        return ("combineLatest(queue:)", { combineLatest(queue: world.queue, $0, other) |> map { $0 &- $1 } })
    },
    { world in
        let next = scriptedSource(world, "thenNext") |> checked(world, "thenNext")
        return ("then", then(next))
    },
    { world in ("mapToSignal", mapToSignal { _ in scriptedSource(world, "switchInner") |> checked(world, "switchInner") }) },
    { world in ("mapToQueue", mapToQueue { _ in scriptedSource(world, "queueInner") |> checked(world, "queueInner") }) },
    { world in
        ("mapToThrottled", mapToThrottled { _ in scriptedSource(world, "throttledInner") |> checked(world, "throttledInner") })
    },
    { world in
        ("catch", `catch` { _ in scriptedSource(world, "catchFallback") |> checked(world, "catchFallback") })
    },
    { _ in ("restartIfError", { restartIfError($0) |> castError(ModelError.self) }) },
    { _ in
        // `Signal<Never, E>` back to `Signal<Int, E>`: only terminal events.
        (
            "ignoreValues",
            { upstream in
                Signal { subscriber in
                    ignoreValues(upstream).start(
                        error: { subscriber.putError($0) },
                        completed: { subscriber.putCompletion() }
                    )
                }
            }
        )
    },
    { world in
        let other = scriptedSource(world, "combineLatestArrayInput") |> checked(world, "combineLatestArrayInput")
        return ("combineLatest([])", { combineLatest([$0, other]) |> map { $0.reduce(0, &+) } })
    },
    // ReactiveCocoa operators (Signal+RAC*.swift, Debugging/).
    { world in
        let other = scriptedSource(world, "mergeInput") |> checked(world, "mergeInput")
        return ("merge", merge(other))
    },
    { world in
        let other = scriptedSource(world, "zipInput") |> checked(world, "zipInput")
        return ("zipWith", { $0 |> zipWith(other) |> map { $0 &+ $1 } })
    },
    { world in
        let other = scriptedSource(world, "concatInput") |> checked(world, "concatInput")
        return ("concat", concat(other))
    },
    { world in
        (
            "flattenMap",
            flattenMap { value in
                scriptedSource(world, "flattenMapInner") |> checked(world, "flattenMapInner") |> map { $0 &+ value }
            }
        )
    },
    { world in
        let limit = world.pick(1...2)
        return (
            "flattenMap(maxConcurrent: \(limit))",
            flattenMap(maxConcurrent: limit) { value in
                scriptedSource(world, "flattenLimitInner") |> checked(world, "flattenLimitInner") |> map { $0 &- value }
            }
        )
    },
    { world in
        let trigger = scriptedSource(world, "takeUntilTrigger") |> checked(world, "takeUntilTrigger")
        return ("takeUntil", takeUntil(trigger))
    },
    { world in
        let replacement = scriptedSource(world, "replacement") |> checked(world, "replacement")
        return ("takeUntilReplacement", takeUntilReplacement(replacement))
    },
    { world in
        let sampler = scriptedSource(world, "sampler") |> checked(world, "sampler")
        return ("sample", sample(sampler))
    },
    { _ in ("takeUntilBlock", takeUntil { $0 % 7 == 0 }) },
    { _ in ("takeWhile", takeWhile { $0 % 7 != 0 }) },
    { world in
        let count = world.pick(0...3)
        return ("skip(\(count))", skip(count))
    },
    { _ in ("skipWhile", skipWhile { $0 % 3 != 0 }) },
    { _ in ("skipUntil", skipUntil { $0 % 3 == 0 }) },
    { world in
        let count = world.pick(0...3)
        return ("takeLast(\(count))", takeLast(count))
    },
    { _ in ("firstOrDefault", firstOrDefault(-1)) },
    { _ in ("lastOrDefault", lastOrDefault(-1)) },
    { _ in ("startWith", startWith(0)) },
    { _ in ("scan", scan(0, { $0 &+ $1 })) },
    { _ in ("aggregate", aggregate(0, { $0 &+ $1 })) },
    { _ in ("combinePrevious", combinePrevious(0, { $0 &- $1 })) },
    { _ in ("collect", { collect($0) |> map { $0.count } }) },
    { _ in ("any", { $0 |> any(where: { $0 % 2 == 0 }) |> map { $0 ? 1 : 0 } |> castError(ModelError.self) }) },
    { _ in ("all", { $0 |> all(where: { $0 % 5 != 0 }) |> map { $0 ? 1 : 0 } |> castError(ModelError.self) }) },
    { _ in ("retry(2)", retry(2)) },
    { world in
        let replacement = scriptedSource(world, "catchToReplacement") |> checked(world, "catchToReplacement")
        return ("catchTo", catchTo(replacement))
    },
    { _ in
        (
            "tryMap",
            tryMap { (value: Int) throws(ModelError) -> Int in
                if value % 11 == 0 { throw ModelError(code: value) }
                return value
            }
        )
    },
    { _ in ("materializeEvents", { $0 |> materializeEvents |> dematerializeEvents }) },
    { _ in
        (
            "doNext/doError/doCompleted/initially/finally",
            { $0 |> doNext { _ in } |> doError { _ in } |> doCompleted {} |> initially {} |> finally {} }
        )
    },
    { world in ("throttle", throttle(Double(world.pick(1...2)), queue: world.queue)) },
    { world in ("throttle(valuesPassingTest:)", throttle(1, queue: world.queue, valuesPassingTest: { $0 % 2 == 0 })) },
    { world in ("bufferWithTime", { $0 |> bufferWithTime(Double(world.pick(1...3)), queue: world.queue) |> map { $0.count } }) },
    { world in ("failAfterTimeout", failAfterTimeout(Double(world.pick(1...5)), queue: world.queue, error: ModelError(code: -2)))
    },
    { world in ("delayEvents", delayEvents(Double(world.pick(1...3)), queue: world.queue)) },
    { _ in ("logAll", logAll(to: SignalLogSink { _ in })) },
    { _ in ("named", named("model")) },
    { world in
        let other = scriptedSource(world, "switchCase") |> checked(world, "switchCase")
        return ("switchCases", { switchCases($0 |> map { $0 % 3 }, cases: [0: other, 1: .single(1)], default: .complete()) })
    },
    { _ in ("groupBy", { $0 |> groupBy { $0 % 2 } |> flattenMap { group in group.signal |> map { $0 &+ group.key } } }) },
]

// MARK: - The trial

/// What a trial's final subscriber saw, summed over trials.
struct TrialOutcome {
    var values = 0
    var errors = 0
    var completions = 0
    /// Ended by disposal, without a terminal event.
    var unterminated = 0
    var subscriptions = 0
    /// Ended with the handle dropped undisposed and the sources gone.
    var abandoned = 0

    mutating func add(_ other: TrialOutcome) {
        values += other.values
        errors += other.errors
        completions += other.completions
        unterminated += other.unterminated
        subscriptions += other.subscriptions
        abandoned += other.abandoned
    }
}

@discardableResult
func runModelTrial(seed: UInt64) -> TrialOutcome {
    let outcome = Shared(TrialOutcome())
    let world = ModelWorld(seed: seed)
    var chain = scriptedSource(world, "source") |> checked(world, "source")
    var names: [String] = []
    for _ in 0..<world.pick(1...6) {
        let (name, apply) = modelOperators[world.pick(0...(modelOperators.count - 1))](world)
        names.append(name)
        chain = chain |> apply |> checked(world, name)
    }
    let description = "source |> " + names.joined(separator: " |> ")

    // The final subscriber's callbacks hold a probe: released once the
    // subscription ends.
    final class CallbackProbe: @unchecked Sendable {}
    weak var weakProbe: CallbackProbe?
    let finalTerminated = Shared(false)
    var handle: (any Disposable)?
    do {
        let probe = CallbackProbe()
        weakProbe = probe
        handle = chain.start(
            next: { _ in
                withExtendedLifetime(probe) {}
                if finalTerminated.value { world.fail("\(description): value after termination") }
                outcome.withLock { $0.values += 1 }
            },
            error: { _ in
                withExtendedLifetime(probe) {}
                if finalTerminated.value { world.fail("\(description): error after termination") }
                finalTerminated.value = true
                outcome.withLock { $0.errors += 1 }
            },
            completed: {
                withExtendedLifetime(probe) {}
                if finalTerminated.value { world.fail("\(description): completion after termination") }
                finalTerminated.value = true
                outcome.withLock { $0.completions += 1 }
            }
        )
    }

    // Random events, time steps and (rarely) an early dispose.
    for _ in 0..<world.pick(5...60) {
        let live = world.runs.filter(\.isLive)
        switch world.pick(0...99) {
        case 0..<60 where !live.isEmpty:
            live[world.pick(0...(live.count - 1))].subscriber?.putNext(world.freshValue())
        case 60..<68 where !live.isEmpty:
            let run = live[world.pick(0...(live.count - 1))]
            run.terminated = true
            if world.chance(50) {
                run.subscriber?.putCompletion()
            } else {
                run.subscriber?.putError(ModelError(code: world.freshValue()))
            }
        case 68..<99:
            world.scheduler.advance(by: Double(world.pick(0...2)))
        default:
            handle?.dispose()
        }
    }

    // Ending, one of three: abandon the subscription (drop the handle
    // undisposed and let every source drop its subscriber: the callbacks
    // must still be released, as when a SwiftSignalKit source lets go),
    // terminate the rest, or dispose.
    if world.chance(25) {
        handle = nil
        var dropped = 0
        // Draining time may subscribe again (restart, retry, delays): drop
        // those subscribers too, until nothing new appears.
        repeat {
            dropped = world.runs.count
            for run in world.runs { run.subscriber = nil }
            world.scheduler.run()
        } while world.runs.count != dropped
        if weakProbe != nil {
            world.fail(
                "\(description): the final callbacks were not released when the handle was dropped undisposed and every source dropped its subscriber"
            )
        }
        outcome.withLock { $0.abandoned += 1 }
        return outcome.value
    }
    if world.chance(50) {
        while let run = world.runs.first(where: \.isLive) {
            run.terminated = true
            run.subscriber?.putCompletion()
            world.scheduler.run()
        }
    }
    if !finalTerminated.value { outcome.withLock { $0.unterminated += 1 } }
    handle?.dispose()
    world.scheduler.run()
    handle = nil
    outcome.withLock { $0.subscriptions = world.runs.count + world.checks.count }

    for run in world.runs where run.disposeCount != 1 {
        world.fail("\(description): \(run.name) disposed \(run.disposeCount) times (expected once)")
    }
    for run in world.checks where run.disposeCount != 1 {
        world.fail("\(description): \(run.name) disposed \(run.disposeCount) times (expected once)")
    }
    // Sources drop their subscribers; the final callbacks must be gone.
    for run in world.runs { run.subscriber = nil }
    if weakProbe != nil {
        world.fail("\(description): the final callbacks were not released")
    }
    return outcome.value
}
