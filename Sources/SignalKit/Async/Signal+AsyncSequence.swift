// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// From async to signals: a signal that iterates an `AsyncSequence`.
// (The other direction, `first()`, `get()` and `values`, is in
// Signal+Async.swift.)

extension Signal {
    /// A cold signal of the elements of a non-throwing `AsyncSequence`.
    ///
    /// Each subscription starts a `Task` (with `priority`) that iterates the
    /// sequence, sends each element as a value and completes when the
    /// sequence ends. Disposing the subscription cancels the task: no event
    /// follows the disposal, and cancellation is not an error. Whether the
    /// sequence itself stops early on cancellation is up to the sequence
    /// (`AsyncStream` does); the task stops at its next element either way.
    /// Every subscription makes its own iterator: subscribe a single-pass
    /// sequence such as `AsyncStream` once (share it with `multicast` or a
    /// `ValuePipe` if several subscribers need its elements).
    ///
    /// **Threading:** events are sent from the task, on the global concurrent
    /// executor, one at a time. `start` returns before the first element.
    ///
    /// ```swift
    /// let (stream, continuation) = AsyncStream<Int>.makeStream()
    /// let handle = Signal<Int, NoError>(stream).start(next: { print($0) })
    /// continuation.yield(1)
    /// continuation.finish()
    /// handle.dispose()
    /// ```
    public convenience init<S: AsyncSequence & Sendable>(_ sequence: S, priority: TaskPriority? = nil)
    where S.Element == T, S.Failure == Never {
        self.init { subscriber in
            let task = Task(priority: priority) {
                for await element in sequence {
                    if Task.isCancelled { return }
                    subscriber.putNext(element)
                }
                if !Task.isCancelled { subscriber.putCompletion() }
            }
            return subscriber._disposable(cancelling: task)
        }
    }
}

extension Signal where E: Error {
    /// A cold signal of the elements of a throwing `AsyncSequence`, with the
    /// sequence's typed failure as the signal's error.
    ///
    /// As the non-throwing form: one `Task` per subscription, completion when
    /// the sequence ends, disposal cancels the task. An error the sequence
    /// throws becomes the signal's error, unless the subscription was
    /// disposed (the task cancelled) before it: a sequence that throws
    /// because it was cancelled ends silently, as cancellation is not an
    /// error. A sequence typed `throws(any Error)` gives a
    /// `Signal<Element, any Error>`.
    public convenience init<S: AsyncSequence & Sendable>(_ sequence: S, priority: TaskPriority? = nil)
    where S.Element == T, S.Failure == E {
        self.init { subscriber in
            let task = Task(priority: priority) {
                do throws(E) {
                    var iterator = sequence.makeAsyncIterator()
                    while let element = try await iterator.next(isolation: nil) {
                        if Task.isCancelled { return }
                        subscriber.putNext(element)
                    }
                    if !Task.isCancelled { subscriber.putCompletion() }
                } catch {
                    if !Task.isCancelled { subscriber.putError(error) }
                }
            }
            return subscriber._disposable(cancelling: task)
        }
    }
}

// MARK: - An async generator

extension Signal where E: Error {
    /// A cold signal whose generator is an async function: each subscription
    /// runs `body` with its subscriber in a new `Task` (with `priority`).
    ///
    /// `body` sends values with `putNext`; when it returns, the signal
    /// completes (unless `body` already sent a terminal event); an error it
    /// throws becomes the signal's error. Disposing the subscription cancels
    /// the task: nothing is delivered after the disposal, and cancellation
    /// is not an error (an error thrown once the task was cancelled is
    /// dropped).
    ///
    /// ```swift
    /// let pages = Signal<Page, FetchError>.task { subscriber throws(FetchError) in
    ///     var cursor: String? = nil
    ///     repeat {
    ///         let page = try await fetchPage(after: cursor)
    ///         subscriber.putNext(page)
    ///         cursor = page.next
    ///     } while cursor != nil
    /// }
    /// ```
    ///
    /// **Threading:** `body` runs in the task, on the global concurrent
    /// executor; `start` returns before it starts.
    public static func task(
        priority: TaskPriority? = nil,
        _ body: @escaping @Sendable (Subscriber<T, E>) async throws(E) -> Void
    ) -> Signal<T, E> {
        Signal { subscriber in
            let task = Task(priority: priority) {
                do throws(E) {
                    try await body(subscriber)
                    if !Task.isCancelled { subscriber.putCompletion() }
                } catch {
                    if !Task.isCancelled { subscriber.putError(error) }
                }
            }
            return subscriber._disposable(cancelling: task)
        }
    }
}

extension Signal where E == NoError {
    /// A cold signal whose generator is a non-throwing async function (the
    /// throwing form, for signals that can fail, is the same call): each
    /// subscription runs `body` in a new `Task`; returning completes the
    /// signal; disposing cancels the task and nothing is delivered after it.
    public static func task(
        priority: TaskPriority? = nil,
        _ body: @escaping @Sendable (Subscriber<T, NoError>) async -> Void
    ) -> Signal<T, NoError> {
        Signal { subscriber in
            let task = Task(priority: priority) {
                await body(subscriber)
                if !Task.isCancelled { subscriber.putCompletion() }
            }
            return subscriber._disposable(cancelling: task)
        }
    }
}
