// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// One registration on an ``EventEmitter``: the token that
/// ``EventEmitter/addObserver(_:queue:lifetime:callback:)`` returns.
///
/// A token controls its registration: ``cancel()`` removes it,
/// ``cancelsAfterNextFire`` makes the next delivery its last,
/// ``firePreviousData()`` replays the emitter's last arguments to it alone, and
/// ``queue`` chooses where its callback runs. Tokens are ``Disposable``
/// (`dispose()` is `cancel()`), so they compose with ``DisposableSet``,
/// ``MetaDisposable`` and ``Lifetime``.
///
/// You may ignore the token: the registration ends by itself when its owner
/// is deallocated (the emitter notices lazily, see ``EventEmitter``).
///
/// **Lifetime.** The emitter and its tokens hold each other weakly: a token
/// does not keep its emitter alive, and once the emitter is gone `cancel()`
/// and `firePreviousData()` do nothing. A token holds its owner weakly and its
/// callback strongly (until the token itself is released).
///
/// **Threading.** Every member is safe to use from any thread, at any time,
/// also from inside a callback.
public final class EventObserver: Disposable, CustomDebugStringConvertible, Sendable {
    // Every mutable field is an atomic (`queueReference` is an atomic strong
    // reference, readable without a lock); `owner` and `emitter` are `weak
    // let`s (the runtime's weak references are thread-safe).

    /// The object this registration is tied to, or nil once it was
    /// deallocated. Held weakly; during a delivery the emitter holds it
    /// strongly and passes it to the callback as the first argument.
    public weak let owner: (any AnyObject & Sendable)?

    /// Set once, by whichever removal wins (cancel, cancelsAfterNextFire,
    /// removeObserver, the purge of a dead owner, removeAllObservers).
    private let removedFlag = Synchronization.Atomic<Bool>(false)
    private let cancelsFlag = Synchronization.Atomic<Bool>(false)
    /// The key of the registration in the emitter's bag (0 until inserted).
    let key = Synchronization.Atomic<UInt64>(0)
    private let queueReference: _AtomicReference<Queue>
    /// The emitter, through the untyped operations a token needs.
    weak let emitter: (any _EventObserverHost)?
    /// The user's callback behind a closure that restores the types: the
    /// owner is always this registration's, the arguments box always the
    /// emitter's `_EventArguments<repeat each Argument>`.
    private let callback: @Sendable (any AnyObject & Sendable, _EventArgumentsBase) -> Void

    init(
        emitter: any _EventObserverHost,
        owner: any AnyObject & Sendable,
        queue: Queue?,
        callback: @escaping @Sendable (any AnyObject & Sendable, _EventArgumentsBase) -> Void
    ) {
        self.emitter = emitter
        self.owner = owner
        self.callback = callback
        queueReference = _AtomicReference(queue)
    }

    /// The queue the callback runs on, or nil for "on the firing thread".
    ///
    /// Rule, checked at each delivery: if `queue` is nil or current
    /// (``Queue/isCurrent()``), the callback runs synchronously inside the
    /// fire; otherwise it is dispatched asynchronously to `queue` (with the
    /// owner held strongly until it has run). Changing the queue affects
    /// later deliveries; deliveries already dispatched run where they were
    /// sent.
    ///
    /// Ordering: deliveries to one observer through one serial queue run in
    /// the order they were dispatched, so fires made in order (from one
    /// thread, or otherwise ordered) off that queue arrive in order. A fire
    /// made *on* the observer's queue is delivered inline and can overtake
    /// deliveries still waiting in that queue (the same inline rule as
    /// ``Queue/async(_:)`` and `deliverOn`). Concurrent fires have no
    /// order, and with no queue they run the callback concurrently.
    ///
    /// Reading it takes no lock (a fire reads it for every delivery).
    public var queue: Queue? {
        get { queueReference.load() }
        set { queueReference.store(newValue) }
    }

    /// When true, the next delivery to this observer removes it (firing
    /// `observerRemoved`) *before* invoking the callback, and is its last.
    ///
    /// Applies to every delivery path: ``EventEmitter/fire(_:)``,
    /// ``EventEmitter/fire(for:_:)`` and ``firePreviousData()``. It is checked
    /// when the delivery runs (after the queue hop, for a queued observer),
    /// and exactly one delivery wins, even when several fires were dispatched
    /// to the observer's queue before the first of them ran (Uber Signals
    /// could deliver each of them). Setting it after a fire affects later
    /// deliveries only.
    public var cancelsAfterNextFire: Bool {
        get { cancelsFlag.load(ordering: .acquiring) }
        set { cancelsFlag.store(newValue, ordering: .releasing) }
    }

    /// Whether the registration was removed from its emitter: by
    /// ``cancel()``, by a ``cancelsAfterNextFire`` delivery, by
    /// ``EventEmitter/removeObserver(_:)``, by
    /// ``EventEmitter/removeAllObservers()``, or because its owner was
    /// deallocated and the emitter purged it. A removed observer receives
    /// nothing more, including deliveries already dispatched to its queue.
    public var isCancelled: Bool {
        removedFlag.load(ordering: .acquiring)
    }

    /// Removes the registration from its emitter and calls the emitter's
    /// `observerRemoved` hook.
    ///
    /// Idempotent: only the first removal (by any path) calls the hook, where
    /// Uber Signals calls it on every `cancel`. After `cancel()` returns, the
    /// callback is not started again, not even by a delivery already
    /// dispatched to the observer's queue (a callback running on another
    /// thread at that moment finishes). If the emitter is gone, nothing
    /// happens beyond marking the token cancelled.
    ///
    /// Threading: any thread, also from inside a callback (the current
    /// callback finishes).
    public func cancel() {
        _ = detach(notify: true)
    }

    /// Same as ``cancel()``.
    public func dispose() {
        cancel()
    }

    /// Delivers the emitter's last fired arguments to this observer alone,
    /// through the normal delivery path (its queue, ``cancelsAfterNextFire``).
    ///
    /// There is no automatic replay when an observer is added;
    /// `emitter.addObserver(self) { ... }.firePreviousData()` is how an
    /// observer opts in to "subscribe and get the current state".
    ///
    /// - Returns: whether something was delivered (or dispatched to the
    ///   queue): false when nothing was fired yet, always for an emitter
    ///   without arguments (it keeps no data), and when the emitter is gone,
    ///   the observer was removed, or its owner was deallocated.
    @discardableResult
    public func firePreviousData() -> Bool {
        guard !isCancelled, let emitter, let arguments = emitter.lastArguments() else { return false }
        guard let owner else {
            _ = detach(notify: true)
            return false
        }
        deliver(arguments, owner: owner)
        return true
    }

    /// The owner's type (or "deallocated"), the queue and the flags, for
    /// example `EventObserver(owner: ResultView, cancelsAfterNextFire)`.
    public var debugDescription: String {
        var description = "EventObserver("
        if let owner {
            description += "owner: \(type(of: owner))"
        } else {
            description += "owner: deallocated"
        }
        if let queue { description += ", queue: \(queue)" }
        if cancelsAfterNextFire { description += ", cancelsAfterNextFire" }
        if isCancelled { description += ", cancelled" }
        return description + ")"
    }

    // MARK: Internal

    /// Removes the registration if no other path did. Returns whether this
    /// call removed it. `notify`: call `observerRemoved`.
    ///
    /// Sequentially consistent, paired with `isCancelledAfterInsert` (the
    /// key is stored, then the flag read; here the flag is set, then the
    /// key read): one side always sees the other, so a removal racing with
    /// `addObserver` never leaves the entry in the bag.
    func detach(notify: Bool) -> Bool {
        guard !removedFlag.exchange(true, ordering: .sequentiallyConsistent) else { return false }
        emitter?.unregister(self, notify: notify)
        return true
    }

    /// `isCancelled`, sequentially consistent (see `detach`).
    var isCancelledAfterInsert: Bool {
        removedFlag.load(ordering: .sequentiallyConsistent)
    }

    /// Delivers on the firing thread or dispatches to the observer's queue.
    /// `owner` is the strong reference the caller read; a queued delivery
    /// keeps it (and the arguments) until it has run.
    @inline(__always)
    func deliver(_ arguments: _EventArgumentsBase, owner: any AnyObject & Sendable) {
        if let queue, !queue.isCurrent() {
            // The block holds `owner` and `arguments` until it has run (the
            // arguments box is immutable and may also be read by other
            // observers; see EventEmitter's threading notes).
            queue.justDispatch { self.invoke(arguments, owner: owner) }
        } else {
            invoke(arguments, owner: owner)
        }
    }

    /// The delivery itself: the cancelsAfterNextFire check (the one-time
    /// removal decides which delivery runs), then the callback.
    private func invoke(_ arguments: _EventArgumentsBase, owner: any AnyObject & Sendable) {
        if cancelsAfterNextFire {
            guard detach(notify: true) else { return }
        } else if isCancelled {
            return
        }
        callback(owner, arguments)
    }
}

/// What a token needs from its emitter, without the emitter's argument
/// types (a class that declares a type pack cannot be subclassed, so the
/// public token is one non-generic final class and the typed parts live in
/// the emitter and in the token's callback closure).
protocol _EventObserverHost: AnyObject, Sendable {
    /// Removes a detached registration's entry and calls the hook.
    func unregister(_ observer: EventObserver, notify: Bool)
    /// The last fired arguments, or nil if there are none.
    func lastArguments() -> _EventArgumentsBase?
}
