// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

// The ReactiveCocoa examples of seed 002, reproduced exactly. RACSubject is
// played by ValuePipe (hot, forwards to the current subscribers) where the
// example never fails, and by TestSource (hot, driven by hand) where it does;
// `rac_sequence.signal` is `Signal.sequence`. The Subject, replay and command
// examples belong to the Multicasting/Commands suites.

private func words(_ text: String) -> [String] {
    text.split(separator: " ").map(String.init)
}

/// Collects values into one space-separated string.
private final class Output: @unchecked Sendable {
    private let values = SignalKit.Atomic<[String]>(value: [])
    func append(_ value: String) { values.modify { $0 + [value] } }
    var text: String { values.with { $0.joined(separator: " ") } }
}

@Suite struct RACSeedExampleTests {
    @Test func subscription() {
        // "Outputs: A B C D E F G H I"
        let letters = Signal<String, NoError>.sequence(words("A B C D E F G H I"))
        let output = Output()
        _ = letters.start(next: output.append)
        #expect(output.text == "A B C D E F G H I")
    }

    @Test func injectingEffects() {
        // "about to complete subscription 1", then "subscription 1".
        let subscriptions = Shared(0)
        let lines = Shared<[String]>([])
        var loggingSignal = Signal<Never, NoError> { subscriber in
            subscriptions.withLock { $0 += 1 }
            subscriber.putCompletion()
            return EmptyDisposable
        }
        loggingSignal = loggingSignal
            |> doCompleted {
                let line = "about to complete subscription \(subscriptions.value)"
                lines.withLock { $0.append(line) }
            }
        #expect(lines.value.isEmpty, "does not output anything yet")
        _ = loggingSignal.start(completed: {
            let line = "subscription \(subscriptions.value)"
            lines.withLock { $0.append(line) }
        })
        #expect(lines.value == ["about to complete subscription 1", "subscription 1"])
    }

    @Test func mappingAndFiltering() {
        let output = Output()
        _ = (Signal<String, NoError>.sequence(words("A B C D E F G H I")) |> map { $0 + $0 }).start(next: output.append)
        #expect(output.text == "AA BB CC DD EE FF GG HH II")
        let filtered = Output()
        _ = (Signal<String, NoError>.sequence(words("1 2 3 4 5 6 7 8 9")) |> filter { Int($0)! % 2 == 0 })
            .start(next: filtered.append)
        #expect(filtered.text == "2 4 6 8")
    }

    @Test func concatenating() {
        // "Contains: A B C D E F G H I 1 2 3 4 5 6 7 8 9"
        let letters = Signal<String, NoError>.sequence(words("A B C D E F G H I"))
        let numbers = Signal<String, NoError>.sequence(words("1 2 3 4 5 6 7 8 9"))
        let output = Output()
        _ = (letters |> concat(numbers)).start(next: output.append)
        #expect(output.text == "A B C D E F G H I 1 2 3 4 5 6 7 8 9")
    }

    @Test func flatteningSequences() {
        // "Contains: A B C D E F G H I 1 2 3 4 5 6 7 8 9"
        let letters = Signal<String, NoError>.sequence(words("A B C D E F G H I"))
        let numbers = Signal<String, NoError>.sequence(words("1 2 3 4 5 6 7 8 9"))
        let sequenceOfSequences = Signal<Signal<String, NoError>, NoError>.sequence([letters, numbers])
        let output = Output()
        _ = (sequenceOfSequences |> flatten).start(next: output.append)
        #expect(output.text == "A B C D E F G H I 1 2 3 4 5 6 7 8 9")
    }

    @Test func flatteningSubjects() {
        // "Outputs: A 1 B C 2"
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let signalOfSignals = Signal<Signal<String, NoError>, NoError> { subscriber in
            subscriber.putNext(letters.signal())
            subscriber.putNext(numbers.signal())
            subscriber.putCompletion()
            return EmptyDisposable
        }
        let flattened = signalOfSignals |> flatten
        let output = Output()
        let handle = flattened.start(next: output.append)
        letters.putNext("A")
        numbers.putNext("1")
        letters.putNext("B")
        letters.putNext("C")
        numbers.putNext("2")
        #expect(output.text == "A 1 B C 2")
        handle.dispose()
    }

    @Test func mappingAndFlattening() {
        // "Contains: 1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9" and "1_ 3_ 5_ 7_ 9_"
        let numbers = Signal<String, NoError>.sequence(words("1 2 3 4 5 6 7 8 9"))
        let extended = Output()
        _ = (numbers |> flattenMap { Signal<String, NoError>.sequence([$0, $0]) }).start(next: extended.append)
        #expect(extended.text == "1 1 2 2 3 3 4 4 5 5 6 6 7 7 8 8 9 9")
        let edited = Output()
        _ =
            (numbers
            |> flattenMap { number -> Signal<String, NoError> in
                if Int(number)! % 2 == 0 {
                    return .complete()
                } else {
                    return .single(number + "_")
                }
            }).start(next: edited.append)
        #expect(edited.text == "1_ 3_ 5_ 7_ 9_")
    }

    @Test func mappingAndFlatteningRunsEveryInnerToCompletion() {
        // The flattenMap + subscribeCompleted example: every save runs.
        let letters = Signal<String, NoError>.sequence(words("A B C D E F G H I"))
        let saved = Shared<[String]>([])
        let done = Shared(false)
        let saveEntries: @Sendable (String) -> Signal<Never, NoError> = { letter in
            Signal { subscriber in
                saved.withLock { $0.append(letter) }
                subscriber.putCompletion()
                return EmptyDisposable
            }
        }
        _ = (letters |> flattenMap(saveEntries)).start(completed: { done.value = true })
        #expect(saved.value == words("A B C D E F G H I"))
        #expect(done.value)
    }

    @Test func sequencingWithRACThen() {
        // "The new signal only contains: 1 2 3 4 5 6 7 8 9. But when
        // subscribed to, it also outputs: A B C D E F G H I".
        let letters = Signal<String, NoError>.sequence(words("A B C D E F G H I"))
        let sideEffects = Output()
        let sequenced =
            letters
            |> doNext { sideEffects.append($0) }
            |> ignoreValuesThen { Signal<String, NoError>.sequence(words("1 2 3 4 5 6 7 8 9")) }
        let output = Output()
        _ = sequenced.start(next: output.append)
        #expect(output.text == "1 2 3 4 5 6 7 8 9")
        #expect(sideEffects.text == "A B C D E F G H I")
    }

    @Test func merging() {
        // "Outputs: A 1 B C 2"
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let merged = merge([letters.signal(), numbers.signal()])
        let output = Output()
        let handle = merged.start(next: output.append)
        letters.putNext("A")
        numbers.putNext("1")
        letters.putNext("B")
        letters.putNext("C")
        numbers.putNext("2")
        #expect(output.text == "A 1 B C 2")
        handle.dispose()
    }

    @Test func combiningLatestValues() {
        // "Outputs: B1 B2 C2 C3"
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let combined = combineLatest(letters.signal(), numbers.signal()) |> map { letter, number in letter + number }
        let output = Output()
        let handle = combined.start(next: output.append)
        letters.putNext("A")
        letters.putNext("B")
        numbers.putNext("1")
        numbers.putNext("2")
        letters.putNext("C")
        numbers.putNext("3")
        #expect(output.text == "B1 B2 C2 C3")
        handle.dispose()
    }

    @Test func zipping() {
        // "Outputs: A1 B2 C3"
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let combined = zip(letters.signal(), numbers.signal()) |> map { letter, number in letter + number }
        let output = Output()
        let handle = combined.start(next: output.append)
        letters.putNext("A")
        letters.putNext("B")
        numbers.putNext("1")
        numbers.putNext("2")
        letters.putNext("C")
        numbers.putNext("3")
        #expect(output.text == "A1 B2 C3")
        handle.dispose()
    }

    @Test func zippingArraysWithReduce() {
        // The array form with a reduce block (`zip:reduce:` = zip |> map).
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let combined = zip([letters.signal(), numbers.signal()]) |> map { $0.joined() }
        let output = Output()
        let handle = combined.start(next: output.append)
        for (letter, number) in zip(["A", "B", "C"], ["1", "2", "3"]) {
            letters.putNext(letter)
            numbers.putNext(number)
        }
        #expect(output.text == "A1 B2 C3")
        handle.dispose()
    }

    @Test func switching() {
        // "Outputs: A B 1 D"
        let letters = ValuePipe<String>()
        let numbers = ValuePipe<String>()
        let signalOfSignals = ValuePipe<Signal<String, NoError>>()
        let switched = signalOfSignals.signal() |> switchToLatest
        let output = Output()
        let handle = switched.start(next: output.append)
        signalOfSignals.putNext(letters.signal())
        letters.putNext("A")
        letters.putNext("B")
        signalOfSignals.putNext(numbers.signal())
        letters.putNext("C")
        numbers.putNext("1")
        signalOfSignals.putNext(letters.signal())
        numbers.putNext("2")
        letters.putNext("D")
        #expect(output.text == "A B 1 D")
        handle.dispose()
    }

    @Test func switchingStopsAtAnInnerError() {
        // "Next : A", "Next : B", "Error : …"; an inner's completion does not
        // end the switched signal.
        struct DomainError: Error, CustomStringConvertible {
            var description: String { "Error Domain=error Code=1" }
        }
        let log = EventLog()
        let signalOfSignals = TestSource<Signal<String, DomainError>, DomainError>("signalOfSignals", log: EventLog())
        let switched = signalOfSignals.signal |> switchToLatest
        _ = switched.start(
            next: { log.append("Next : \($0)") },
            error: { log.append("Error : \($0)") },
            completed: { log.append("Completed!") }
        )
        let signalA = TestSource<String, DomainError>("A", log: EventLog())
        signalOfSignals.putNext(signalA.signal)
        signalA.putNext("A")
        signalA.putCompletion()
        signalA.putNext("AA")
        let signalB = TestSource<String, DomainError>("B", log: EventLog())
        signalOfSignals.putNext(signalB.signal)
        signalB.putNext("B")
        signalB.putError(DomainError())
        signalB.putNext("BB")
        let signalC = TestSource<String, DomainError>("C", log: EventLog())
        signalOfSignals.putNext(signalC.signal)
        signalC.putNext("C")
        #expect(log.events == ["Next : A", "Next : B", "Error : Error Domain=error Code=1"])
    }

    @Test func debugDescriptionOfAChain() {
        // "[[[RACObserve(self,username)] -distinctUntilChanged] -take: 3] -filter:"
        let description = SignalKitDebug.withSignalNaming {
            let username = ValuePromise("", ignoreRepeated: true).get() |> named("RACObserve(self,username)")
            return (username |> distinctUntilChanged |> take(3) |> filter { $0 == "joshaber" }).description
        }
        #expect(description == "[[[RACObserve(self,username)] -distinctUntilChanged] -take: 3] -filter")
    }
}
