// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Who empties a bounded buffer, for the `blocking` deadlock check: a
/// producer that is the buffer's own consumer would wait for itself, so the
/// boundary stops the process with a message instead
/// (`_blockingSendFromConsumer`). Every bounded boundary asks this one type.
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
