// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// The random driver's schedules: a pure function of a seed and the
// subject's shape, so that the seed of a failing schedule replays it (the
// same actions on the same threads; the threads' interleaving is the
// machine's). SplitMix64 draws the numbers: small, fast, and the same on
// every platform and toolchain (the standard library's random APIs may
// change how they use a generator).

/// SplitMix64: a deterministic pseudo-random generator.
public struct ConformanceRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose numbers depend only on `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number in `0 ..< bound` (`bound` ≥ 1).
    public mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(max(bound, 1)))
    }
}

/// One random schedule: what each thread does to the subject, in order,
/// and how the run ends.
///
/// Every schedule starts the subject (on the calling thread), then runs its
/// threads at once (released together), then ends: either disposes the
/// subscription, or completes the inputs (as many rounds as the subject
/// resubscribes, up to four), waits for the terminal event, and disposes.
public struct ConformanceSchedule: Sendable, Hashable, CustomStringConvertible {
    /// One action of a thread.
    public enum Action: Sendable, Hashable, CustomStringConvertible {
        /// Sends the next value to an input (a source: through its driver),
        /// in a context of its own or in none.
        case send(input: Int, inContext: Bool)
        /// Completes an input's live subscriptions (or the source).
        case complete(input: Int)
        /// Fails an input's live subscriptions (or the source).
        case fail(input: Int)
        /// Disposes the subscription.
        case dispose
        /// Disposes the subscription from inside its next callback.
        case disposeInNextCallback
        /// Sends a value to an input from inside the next value's callback.
        case sendInNextCallback(input: Int)
        /// Advances the virtual clock by this many seconds.
        case advance(Double)
        /// Yields the thread.
        case yield

        /// "send(0)", "dispose in next callback", "advance(0.5)", …
        public var description: String {
            switch self {
            case .send(let input, let inContext): "send(\(input)\(inContext ? "" : ", no context"))"
            case .complete(let input): "complete(\(input))"
            case .fail(let input): "fail(\(input))"
            case .dispose: "dispose"
            case .disposeInNextCallback: "dispose in next callback"
            case .sendInNextCallback(let input): "send(\(input)) in next callback"
            case .advance(let seconds): "advance(\(seconds))"
            case .yield: "yield"
            }
        }
    }

    /// The seed it was made from.
    public let seed: UInt64
    /// Each thread's actions, in order.
    public let threads: [[Action]]
    /// Whether the run ends by completing the inputs (else by a disposal).
    public let endsByCompleting: Bool

    /// The schedule of `seed` for a subject with this shape.
    ///
    /// - Parameters:
    ///   - seed: the schedule's seed.
    ///   - inputs: the subject's inputs (1 for a source: its driver).
    ///   - maxThreads: the most threads.
    ///   - maxActions: the most actions in all.
    ///   - virtualTime: whether the subject runs on the virtual clock: one
    ///     thread then sends and advances the clock (the virtual scheduler
    ///     knows one current queue for the whole process), others only
    ///     dispose.
    ///   - canComplete: whether an input (or the source) can complete.
    ///   - canFail: whether it can fail.
    ///   - sendsFromCallbacks: whether a callback may send (not into a
    ///     buffer that blocks its producer: a send from the consumer into it
    ///     when full is a deadlock, which SignalKit stops the process for).
    public init(
        seed: UInt64,
        inputs: Int,
        maxThreads: Int,
        maxActions: Int,
        virtualTime: Bool,
        canComplete: Bool = true,
        canFail: Bool = true,
        sendsFromCallbacks: Bool = true
    ) {
        var random = ConformanceRandom(seed: seed)
        let threadCount = 1 + random.below(max(maxThreads, 1))
        let actionCount = 1 + random.below(max(maxActions, 1))
        var threads = [[Action]](repeating: [], count: threadCount)
        let inputs = max(inputs, 1)
        for _ in 0..<actionCount {
            let roll = random.below(100)
            let input = random.below(inputs)
            var action: Action
            switch roll {
            case 0..<55: action = .send(input: input, inContext: random.below(4) != 0)
            case 55..<62: action = canComplete ? .complete(input: input) : .yield
            case 62..<66: action = canFail ? .fail(input: input) : .yield
            case 66..<71: action = .dispose
            case 71..<75: action = .disposeInNextCallback
            case 75..<81: action = threadCount == 1 && sendsFromCallbacks ? .sendInNextCallback(input: input) : .yield
            case 81..<94: action = virtualTime ? .advance([0, 0.1, 0.5, 1, 2.5][random.below(5)]) : .yield
            default: action = .yield
            }
            var thread = random.below(threadCount)
            if virtualTime {
                // Only thread 0 touches the clock and the inputs.
                switch action {
                case .dispose, .yield: break
                default: thread = 0
                }
            }
            threads[thread].append(action)
        }
        self.seed = seed
        self.threads = threads
        self.endsByCompleting = canComplete && random.below(2) == 0
    }

    /// The seed as `0x…`, as reports print it.
    public static func hex(_ seed: UInt64) -> String {
        let digits = String(seed, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 16 - digits.count)) + digits
    }

    /// "seed 0x…: thread 0: send(0), dispose; thread 1: …; then complete".
    public var description: String {
        let lines = threads.enumerated().map { index, actions in
            "thread \(index): " + (actions.isEmpty ? "nothing" : actions.map(\.description).joined(separator: ", "))
        }
        return "seed \(Self.hex(seed)): " + lines.joined(separator: "; ")
            + (endsByCompleting ? "; then complete the inputs" : "; then dispose")
    }
}
