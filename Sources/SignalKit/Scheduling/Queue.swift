// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

public import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Identity tag a named queue sets on its DispatchQueue.
private final class _QueueIdentity: Sendable {}

/// The specific key under which named queues store their identity.
private let _queueSpecificKey = DispatchSpecificKey<_QueueIdentity>()

/// A serial (or, for the two global singletons, concurrent) execution
/// context, wrapping a `DispatchQueue` or a custom `QueueScheduler` (such as
/// the thread of its own `Queue(dedicatedThread:)` makes, for low-latency
/// hops).
///
/// The inline rule: `async` and `sync` run the closure immediately when the
/// caller is already on this queue (`isCurrent()`); `justDispatch` and `after`
/// never do. That is what makes `deliverOn(q)` and `runOn(q)` synchronous
/// when already on `q`.
///
/// `isCurrent()`:
/// * a queue made with `Queue(name:qos:)` is current inside its own blocks and
///   inside blocks of queues that target it;
/// * `Queue.mainQueue()` is current on the main thread;
/// * a wrapper made with `Queue(queue:)` and the two global concurrent queues
///   are never current;
/// * a queue made with `Queue(scheduler:)` asks its scheduler (a
///   `Queue(dedicatedThread:)` is current on its thread).
///
/// On Linux the main queue runs only while the main thread runs
/// `dispatchMain()` (or a run loop that drains it).
public final class Queue: Sendable {
    private enum Backend: Sendable {
        case dispatch(DispatchQueue)
        case scheduler(any QueueScheduler)
        /// A `DedicatedThreadScheduler` (`Queue(dedicatedThread:)`, or
        /// `Queue(scheduler:)` given one), with its core beside it for the
        /// hot paths that hand it work directly (`isCurrent` without a
        /// protocol call; `deliverOn`'s one allocation per value). The
        /// scheduler is held too: its `deinit` stops the thread.
        case dedicatedThread(DedicatedThreadScheduler, core: _DedicatedThreadCore)
    }

    private let backend: Backend
    private let identity: _QueueIdentity?
    private let isMainQueue: Bool

    private init(backend: Backend, identity: _QueueIdentity?, isMainQueue: Bool) {
        self.backend = backend
        self.identity = identity
        self.isMainQueue = isMainQueue
    }

    private static let main = Queue(backend: .dispatch(.main), identity: nil, isMainQueue: true)
    private static let concurrentDefault = Queue(queue: .global(qos: .default))
    private static let concurrentBackground = Queue(queue: .global(qos: .background))

    /// The main queue (a singleton). Current on the main thread.
    public class func mainQueue() -> Queue { main }

    /// The global concurrent queue of default QoS (a singleton, never current).
    public class func concurrentDefaultQueue() -> Queue { concurrentDefault }

    /// The global concurrent queue of background QoS (a singleton, never current).
    public class func concurrentBackgroundQueue() -> Queue { concurrentBackground }

    /// Wraps an existing DispatchQueue. The wrapper is never current.
    public init(queue: DispatchQueue) {
        backend = .dispatch(queue)
        identity = nil
        isMainQueue = false
    }

    /// Creates a new serial queue labelled `name ?? ""`.
    public init(name: String? = nil, qos: DispatchQoS = .default) {
        let queue = DispatchQueue(label: name ?? "", qos: qos)
        let identity = _QueueIdentity()
        queue.setSpecific(key: _queueSpecificKey, value: identity)
        backend = .dispatch(queue)
        self.identity = identity
        isMainQueue = false
    }

    /// Creates a queue that runs on `scheduler` (for example a virtual-time
    /// scheduler in tests).
    public init(scheduler: any QueueScheduler) {
        if let dedicated = scheduler as? DedicatedThreadScheduler {
            backend = .dedicatedThread(dedicated, core: dedicated.core)
        } else {
            backend = .scheduler(scheduler)
        }
        identity = nil
        isMainQueue = false
    }

    /// The wrapped DispatchQueue.
    ///
    /// A queue made with `Queue(scheduler:)` has none: asking for it is a
    /// programming error (use `async`, `after` or `Timer` instead).
    public var queue: DispatchQueue {
        switch backend {
        case .dispatch(let queue):
            return queue
        case .scheduler, .dedicatedThread:
            let scheduler = self.scheduler.map { String(describing: $0) } ?? ""
            _signalKitMisuse(
                "Queue.queue: this queue runs on a custom scheduler (\(scheduler)) and has no DispatchQueue; "
                    + "use Queue.async, Queue.after or Timer, which follow the scheduler's clock"
            )
        }
    }

    /// The DispatchQueue of a Dispatch-backed queue, else nil. For hot
    /// paths that hand Dispatch a block literal directly: a Swift closure
    /// passed through `async(_:)` is wrapped again to become a block (two
    /// more allocations per call).
    var _dispatchQueue: DispatchQueue? {
        if case .dispatch(let queue) = backend { return queue }
        return nil
    }

    /// The scheduler of a queue made with `Queue(scheduler:)`, else nil.
    public var scheduler: (any QueueScheduler)? {
        switch backend {
        case .dispatch: nil
        case .scheduler(let scheduler): scheduler
        case .dedicatedThread(let scheduler, _): scheduler
        }
    }

    /// The scheduler of a queue on a dedicated thread, else nil (see
    /// ``Queue/dedicatedThread``).
    var _dedicatedThreadScheduler: DedicatedThreadScheduler? {
        if case .dedicatedThread(let scheduler, _) = backend { return scheduler }
        return nil
    }

    /// The dedicated thread's core, for the hot paths that hand it work
    /// directly (`deliverOn`'s one allocation per value).
    var _dedicatedThread: _DedicatedThreadCore? {
        if case .dedicatedThread(_, let core) = backend { return core }
        return nil
    }

    /// Whether the caller runs on this queue (see the type's documentation).
    public func isCurrent() -> Bool {
        switch backend {
        case .dedicatedThread(_, let core):
            return core.ring.isCurrent
        case .dispatch:
            if isMainQueue { return _isMainThread() }
            guard let identity else { return false }
            return DispatchQueue.getSpecific(key: _queueSpecificKey) === identity
        case .scheduler(let scheduler):
            return scheduler.isCurrent()
        }
    }

    /// Runs `f` now if already on this queue, else asynchronously (FIFO).
    public func async(_ f: @escaping @Sendable () -> Void) {
        if isCurrent() {
            f()
        } else {
            justDispatch(f)
        }
    }

    /// Runs `f` now if already on this queue, else on the queue, waiting for it.
    ///
    /// Off the queue, `f` runs in the caller's context (see
    /// `SignalContextPropagation`).
    public func sync(_ f: () -> Void) {
        if isCurrent() {
            f()
            return
        }
        let captured = _ContextHook.capture()
        switch backend {
        case .dispatch(let queue):
            withoutActuallyEscaping(f) { f in
                let box = _UncheckedSendable(f)
                queue.sync { _run(in: captured, box.value) }
            }
        case .scheduler(let scheduler):
            scheduler.performSync { _run(in: captured, f) }
        case .dedicatedThread(let scheduler, _):
            scheduler.performSync { _run(in: captured, f) }
        }
    }

    /// Runs `f` asynchronously on the queue, never inline.
    ///
    /// `f` runs in the caller's context (see `SignalContextPropagation`), as
    /// with every way of scheduling work on a queue.
    public func justDispatch(_ f: @escaping @Sendable () -> Void) {
        _justDispatch(_inCurrentContext(f))
    }

    /// `justDispatch` without the caller's context: for a boundary that
    /// delivers several senders' events from one block and runs each in its
    /// own (`_ContextHook.capture()` per event).
    func _justDispatch(_ f: @escaping @Sendable () -> Void) {
        switch backend {
        case .dispatch(let queue):
            queue.async(execute: f)
        case .scheduler(let scheduler):
            scheduler.schedule(f)
        case .dedicatedThread(let scheduler, _):
            scheduler.schedule(f)
        }
    }

    /// Runs `f` asynchronously with the given QoS enforced, never inline.
    public func justDispatchWithQoS(qos: DispatchQoS, _ f: @escaping @Sendable () -> Void) {
        let f = _inCurrentContext(f)
        switch backend {
        case .dispatch(let queue):
            queue.async(qos: qos, flags: .enforceQoS, execute: f)
        case .scheduler(let scheduler):
            scheduler.schedule(f)
        case .dedicatedThread(let scheduler, _):
            scheduler.schedule(f)
        }
    }

    /// Runs `f` on the queue after `delay` seconds, never inline (not even for 0).
    public func after(_ delay: Double, _ f: @escaping @Sendable () -> Void) {
        let f = _inCurrentContext(f)
        switch backend {
        case .dispatch(let queue):
            queue.asyncAfter(deadline: .now() + delay, execute: f)
        case .scheduler(let scheduler):
            _ = scheduler.schedule(after: delay, f)
        case .dedicatedThread(let scheduler, _):
            _ = scheduler.schedule(after: delay, f)
        }
    }

    /// Runs `f` after `delay` seconds unless the result is disposed first.
    /// Used by SignalKit's timing operators.
    func cancellableAfter(_ delay: Double, _ f: @escaping @Sendable () -> Void) -> any Disposable {
        _cancellableAfter(delay, _inCurrentContext(f))
    }

    /// `cancellableAfter` without the caller's context (see `_justDispatch`).
    func _cancellableAfter(_ delay: Double, _ f: @escaping @Sendable () -> Void) -> any Disposable {
        switch backend {
        case .dispatch(let queue):
            // Dispatch work items are thread-safe; corelibs does not mark them `Sendable`.
            nonisolated(unsafe) let item = DispatchWorkItem(block: f)
            queue.asyncAfter(deadline: .now() + delay, execute: item)
            return ActionDisposable { item.cancel() }
        case .scheduler(let scheduler):
            return scheduler.schedule(after: delay, f)
        case .dedicatedThread(let scheduler, _):
            return scheduler.schedule(after: delay, f)
        }
    }

    /// The queue's clock in seconds: the scheduler's for scheduler-backed
    /// queues, else a monotonic clock.
    var currentTime: Double {
        switch backend {
        case .dispatch:
            return _monotonicSeconds()
        case .scheduler(let scheduler):
            return scheduler.currentTime
        case .dedicatedThread(let scheduler, _):
            return scheduler.currentTime
        }
    }
}
