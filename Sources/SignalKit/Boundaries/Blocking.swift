// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The `blocking` policy, once for every bounded boundary: where producers
// wait for room (`_BlockedProducers`), who the consumer is (`_ConsumerMark`:
// a producer that is the buffer's own consumer would wait for itself), and
// the message that stops the process instead (`_blockingSendFromConsumer`).

/// Who empties a bounded buffer, for the `blocking` deadlock check. Every
/// bounded boundary asks this one type.
///
/// The consumer is the executor a boundary delivers on (a `Queue` that is
/// current), a thread marked while it empties the buffer (a drain, or a
/// subscription being made on the consumer's behalf), or a task marked while
/// it iterates. Kept under the owning buffer's lock.
struct _ConsumerMark {
    /// The queue that delivers (nil: no queue, or a thread pool lane, whose
    /// drains mark their thread).
    private let queue: Queue?
    /// The thread marked as the consumer, while it is.
    private(set) var thread: pthread_t?
    /// The task marked as the consumer (its identity: an `UnsafeCurrentTask`
    /// must not be kept).
    private var task: Int?

    init(queue: Queue? = nil) {
        self.queue = queue
    }

    /// Marks the calling thread as the consumer.
    mutating func markThread() { thread = pthread_self() }

    /// The consumer's thread left.
    mutating func clearThread() { thread = nil }

    /// Marks the calling task as the consumer (nothing outside a task).
    mutating func markTask() { task = withUnsafeCurrentTask { $0?.hashValue } }

    /// Whether the calling code is the consumer.
    func isCaller() -> Bool {
        if let thread, pthread_equal(thread, pthread_self()) != 0 { return true }
        if let task, withUnsafeCurrentTask(body: { $0?.hashValue }) == task { return true }
        if let queue, queue.isCurrent() { return true }
        return false
    }
}

/// Where the producers of one subscription under
/// ``SignalBuffer/blocking(beyond:)`` wait for room: made only for that
/// policy (a subscription under another has none, and no condition
/// variable). `count` is guarded by the owner's mutex, which `wait` is
/// called with.
///
/// `@unchecked Sendable`: `count` is guarded by the owner's mutex; the
/// condition variable is thread-safe.
final class _BlockedProducers: @unchecked Sendable {
    private let condition = _Condition()
    /// Producers waiting now.
    private(set) var count = 0

    deinit {
        condition.destroy()
    }

    /// A producer found the buffer full (`mutex` held). If it is the
    /// consumer (`callerIsConsumer`), `beforeStopping` runs (the owner lets
    /// go of what it holds) and the process stops with the deadlock message
    /// naming `consumer` and `boundary`. Otherwise the blocked send is
    /// counted, `beforeWaiting` runs, and the producer waits until the
    /// consumer takes values or the subscription is disposed; it returns
    /// with `mutex` held, and the owner looks again.
    func wait(
        on mutex: _Mutex,
        callerIsConsumer: Bool,
        consumer: @autoclosure () -> String,
        boundary: String,
        counters: _BufferCounts?,
        beforeStopping: () -> Void,
        beforeWaiting: () -> Void = {}
    ) {
        if callerIsConsumer {
            beforeStopping()
            _blockingSendFromConsumer("the \(consumer()) that empties it", boundary: boundary)
        }
        beforeWaiting()
        count += 1
        counters?.recordBlockedSend()
        condition.wait(mutex)
        count -= 1
    }

    /// Wakes the waiting producers (the owner's mutex held): the consumer
    /// took values, or the subscription was disposed.
    func wake() {
        if count > 0 { condition.broadcast() }
    }
}

/// Stops the process: a value was sent into the full buffer of a
/// ``SignalBuffer/blocking(beyond:)`` boundary from its own consumer, which
/// waiting for room would deadlock. Every bounded boundary reports it here,
/// in the same words; `consumer` names the consumer ("the queue that empties
/// it"), `boundary` what the user chooses a policy for.
func _blockingSendFromConsumer(_ consumer: String, boundary: String = "boundary") -> Never {
    _signalKitMisuse(
        "SignalBuffer.blocking: a value was sent into a full buffer from \(consumer); waiting for room would "
            + "deadlock (the consumer cannot take a value while its producer waits). Send from another thread, "
            + "or choose a dropping or failing policy for this \(boundary)"
    )
}
