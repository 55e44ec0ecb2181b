// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Creating: signals made from something else: ReactiveCocoa's sequence signals
// (RAC's `-[RACSequence signal]` / `signalWithScheduler:`) and SwiftSignalKit's
// `deferred`. SwiftSignalKit's `single`, `complete`, `fail` and `never` are in
// Core/Single.swift; `Signal(catching:)` (RAC's `+try:`) is in Errors, `interval`
// / `timer` in Timing.

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
    public static func sequence<S: Sequence & Sendable>(_ elements: S, queue: Queue? = nil) -> Signal<T, E>
    where S.Element == T, S.Iterator: SendableMetatype {
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
final class _SequenceRun<I: IteratorProtocol & SendableMetatype, E>: Disposable, @unchecked Sendable {
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

// MARK: - deferred

/// A signal that calls `generator` at each subscription and forwards the
/// signal it returns.
///
/// SwiftSignalKit's `deferred` (also ReactiveCocoa's `+defer:`).
///
/// Marble: `generator() = "a-|"` → `"a-|"` (a fresh signal per subscription)
///
/// - Parameters:
///   - generator: called synchronously inside each subscription.
/// - Returns: the deferred signal.
/// - Threading: `generator` runs on the subscribing thread.
/// - Termination: forwarded unchanged.
/// - Disposal: disposes the generated signal's subscription. As a segment
///   of `then`, a deferred signal is expanded in place, so recursive
///   `deferred { … |> then(deferred { … }) }` loops run in constant stack.
public func deferred<T, E>(_ generator: @escaping @Sendable () -> Signal<T, E>) -> Signal<T, E> {
    Signal(composition: _DeferredComposition(factory: generator)) { subscriber in
        generator()._start(_ForwardSink(downstream: subscriber))
    }._combined("deferred", inputs: [])
}
