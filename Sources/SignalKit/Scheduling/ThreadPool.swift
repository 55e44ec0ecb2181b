// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The state a `ThreadPoolTask`'s action can poll to notice cancellation.
public final class ThreadPoolTaskState: Sendable {
    public let cancelled = Atomic<Bool>(value: false)
}

/// A unit of work for a `ThreadPool`. `cancel()` only sets the state flag: a
/// task not yet started is skipped; a running one can poll `state.cancelled`.
///
/// The action runs in the context of the code that made the task (see
/// `SignalContextPropagation`).
public final class ThreadPoolTask: Sendable {
    private let state = ThreadPoolTaskState()
    private let action: @Sendable (ThreadPoolTaskState) -> Void

    public init(_ action: @escaping @Sendable (ThreadPoolTaskState) -> Void) {
        self.action = _inCurrentContext(action)
    }

    /// A task whose action runs in the caller's context or, with
    /// `capturingContext` false, in none captured: for a boundary that runs
    /// each event in its own (see `Queue._justDispatch`).
    init(capturingContext: Bool, _ action: @escaping @Sendable (ThreadPoolTaskState) -> Void) {
        self.action = capturingContext ? _inCurrentContext(action) : action
    }

    /// Runs the action now, on this thread, unless the task was cancelled.
    func execute() {
        if !state.cancelled.with({ $0 }) {
            action(state)
        }
    }

    public func cancel() {
        _ = state.cancelled.swap(true)
    }
}

/// A serial lane of a `ThreadPool`: its tasks run one after another in FIFO
/// order (possibly on different pool threads, never overlapping).
///
/// SwiftSignalKit holds the pool weakly; a pool's threads keep it alive for
/// the life of the process, so a strong reference behaves the same and needs
/// no weak-reference side table.
public final class ThreadPoolQueue: Equatable, Sendable {
    private let threadPool: ThreadPool
    // Unsafe: `tasks`, `isTaken` and `isReady` are guarded by the pool's mutex.
    fileprivate nonisolated(unsafe) var tasks: [ThreadPoolTask] = []
    fileprivate nonisolated(unsafe) var isTaken = false
    fileprivate nonisolated(unsafe) var isReady = false

    public init(threadPool: ThreadPool) {
        self.threadPool = threadPool
    }

    public func addTask(_ task: ThreadPoolTask) {
        threadPool.enqueue(task, on: self)
    }

    public static func == (lhs: ThreadPoolQueue, rhs: ThreadPoolQueue) -> Bool {
        lhs === rhs
    }
}

/// A fixed set of threads running `ThreadPoolTask`s.
///
/// Tasks of one `ThreadPoolQueue` run serially in FIFO order; different
/// queues run concurrently. `addTask` uses a fresh queue per task. The
/// threads run for the life of the process (they keep the pool alive), as in
/// SwiftSignalKit. `threadPriority` is accepted for compatibility and ignored
/// on Linux.
public final class ThreadPool: Sendable {
    private let mutex = _Mutex()
    /// Where idle pool threads wait for a ready queue (with `mutex` held).
    private let condition = _Condition()
    // Unsafe: guarded by `mutex` (as are every queue's tasks).
    private nonisolated(unsafe) var ready: [ThreadPoolQueue] = []
    private nonisolated(unsafe) var readyStart = 0

    public init(threadCount: Int, threadPriority: Double) {
        _signalKitRequire(threadCount > 0, "ThreadPool(threadCount:threadPriority:) needs at least one thread")
        for index in 0..<threadCount {
            let context = Unmanaged.passRetained(_PoolThreadContext(pool: self, index: index)).toOpaque()
            var thread = pthread_t()
            let status = pthread_create(
                &thread, nil,
                { raw in
                    let context = Unmanaged<_PoolThreadContext>.fromOpaque(raw!).takeRetainedValue()
                    context.pool.run()
                    return nil
                }, context)
            _signalKitRequire(status == 0, "ThreadPool: pthread_create failed (\(status))")
            pthread_detach(thread)
        }
    }

    /// Runs `task` on a fresh queue (concurrently with everything else).
    public func addTask(_ task: ThreadPoolTask) {
        nextQueue().addTask(task)
    }

    /// A new serial lane of this pool.
    public func nextQueue() -> ThreadPoolQueue {
        ThreadPoolQueue(threadPool: self)
    }

    /// Whether the calling thread is one of this pool's threads.
    public func isCurrentThreadInPool() -> Bool {
        _ThreadSlot.threadPool.pointer == Unmanaged.passUnretained(self).toOpaque()
    }

    fileprivate func enqueue(_ task: ThreadPoolTask, on queue: ThreadPoolQueue) {
        mutex.lock()
        queue.tasks.append(task)
        if !queue.isTaken && !queue.isReady {
            queue.isReady = true
            ready.append(queue)
        }
        condition.broadcast()
        mutex.unlock()
    }

    /// Runs `task`; the caller's reference ends with this call.
    private static func executeAndRelease(_ task: consuming ThreadPoolTask) {
        task.execute()
    }

    fileprivate func run() {
        _ThreadSlot.threadPool.pointer = Unmanaged.passUnretained(self).toOpaque()  // set once per pool thread
        mutex.lock()
        while true {
            while readyStart == ready.count {
                condition.wait(mutex)
            }
            let queue = ready[readyStart]
            readyStart += 1
            if readyStart > 64 && readyStart * 2 > ready.count {
                ready.removeFirst(readyStart)
                readyStart = 0
            }
            queue.isReady = false
            queue.isTaken = true
            let task = queue.tasks.removeFirst()
            mutex.unlock()
            // The task (its action and what that captures) is released here,
            // before relocking: a deinit may add tasks to this pool.
            Self.executeAndRelease(consume task)
            mutex.lock()
            queue.isTaken = false
            if !queue.tasks.isEmpty {
                queue.isReady = true
                ready.append(queue)
                condition.signal()
            }
        }
    }
}

private final class _PoolThreadContext: Sendable {
    let pool: ThreadPool
    let index: Int
    init(pool: ThreadPool, index: Int) {
        self.pool = pool
        self.index = index
    }
}
