// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// RACCreation: signals made from a Swift sequence (RAC's `-[RACSequence
// signal]` / `signalWithScheduler:`). The other RAC creation forms are
// `Signal(catching:)` (RAC's `+try:`, Signal+RACCatch.swift) and `interval`
// / `timer` (Signal+RACTiming.swift); `single`, `complete`, `fail`, `never`
// and `deferred` are SwiftSignalKit's.

extension Signal {
    /// A signal that sends the elements of `elements`, in order, then
    /// completes.
    ///
    /// Marble: `[a, b, c]` → `"(abc|)"` without a queue; `"-a-b-c|"` (one
    /// element per queue turn) with one.
    ///
    /// ```swift
    /// let letters = Signal<String, NoError>.sequence(["A", "B", "C"])
    /// ```
    ///
    /// - Parameters:
    ///   - elements: iterated once per subscription.
    ///   - queue: nil (the default): every element and the completion are
    ///     sent synchronously inside `start`, so the sequence must be finite
    ///     (nothing can stop the loop before the generator returns). A queue:
    ///     each element is sent from its own block on `queue` (RAC's
    ///     `signalWithScheduler:`), so the subscription can be disposed
    ///     between elements and the sequence may be infinite.
    ///
    /// - Threading: on the subscribing thread, or on `queue`.
    /// - Termination: completes after the last element; never fails.
    /// - Disposal: with a queue, stops before the next element.
    public static func sequence<S: Sequence>(_ elements: S, queue: Queue? = nil) -> Signal<T, E>
    where S.Element == T {
        guard let queue else {
            return Signal { subscriber in
                for element in elements {
                    subscriber.putNext(element)
                }
                subscriber.putCompletion()
                return EmptyDisposable
            }._combined("sequence", inputs: [])
        }
        return Signal { subscriber in
            let run = _SequenceRun(iterator: elements.makeIterator(), subscriber: subscriber, queue: queue)
            queue.justDispatch { run.step() }
            return run
        }._combined("sequence", inputs: [])
    }
}

/// One subscription of `Signal.sequence(_:queue:)`: sends one element per
/// block on the queue.
///
/// `@unchecked Sendable`: `iterator` and `subscriber` are used only by the
/// blocks on `queue` (serial, one after another); `disposed` is atomic.
final class _SequenceRun<I: IteratorProtocol, E>: Disposable, @unchecked Sendable {
    private var iterator: I
    private var subscriber: Subscriber<I.Element, E>?
    private let queue: Queue
    private let disposed = Synchronization.Atomic<Bool>(false)

    init(iterator: I, subscriber: Subscriber<I.Element, E>, queue: Queue) {
        self.iterator = iterator
        self.subscriber = subscriber
        self.queue = queue
    }

    func step() {
        guard !disposed.load(ordering: .acquiring), let subscriber else {
            subscriber = nil
            return
        }
        if let element = iterator.next() {
            subscriber.putNext(element)
            queue.justDispatch { self.step() }
        } else {
            self.subscriber = nil
            subscriber.putCompletion()
        }
    }

    func dispose() {
        disposed.store(true, ordering: .releasing)
    }
}
