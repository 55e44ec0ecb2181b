import Synchronization

// The engine of `switchToLatest` / `mapToSignal` (switching), `queue` /
// `mapToQueue` (queueing) and `throttled` / `mapToThrottled` (throttling):
// an outer signal of inner signals, at most one inner live at a time.

/// The state of one subscription of a signal-of-signals operator.
///
/// * Switching: each new inner is subscribed at once; the previous one is
///   disposed right after (new subscribed first) and silenced from the moment
///   its successor starts (its events, completion included, are dropped).
/// * Queueing: inners run one after another in arrival order.
/// * Throttling: as queueing, but only the latest waiting inner is kept;
///   older waiting ones are released without ever being subscribed.
///
/// When the running inner completes asynchronously, the next one is
/// subscribed inside its completion callback, before it is disposed. An inner
/// that completes synchronously, while being subscribed, is disposed when its
/// subscription returns and the loop in `run` subscribes the next one: the
/// stack does not grow with the number of queued inners.
///
/// The output completes when the outer has completed and no inner is running
/// or waiting (at once if the outer completes while idle). An error from the
/// outer or from the current inner fails the output; nothing is subscribed
/// after an error or after disposal (waiting inners are released at disposal,
/// which every termination of the output triggers).
///
/// The state is the generator's disposable: disposing it disposes the
/// current inner, then the outer. It holds no reference to the downstream
/// subscriber (the sinks do), so it forms no cycle with the downstream
/// subscription.
///
/// `@unchecked Sendable`: `state` is guarded by `mutex`; `currentIndex` is an
/// atomic copy of `State.index` for the value path.
final class _SignalQueueState<R, E>: Disposable, @unchecked Sendable {
    enum Mode {
        case switching
        case queueing
        case throttling
    }

    private enum Next {
        case none
        case complete
        case start(Signal<R, E>, index: Int)
    }

    private struct State {
        /// An inner is running (subscribed, not completed).
        var executing = false
        /// The number of the latest inner started (1, 2, …).
        var index = 0
        /// The latest inner's `_start` has returned.
        var startReturned = true
        /// The latest inner completed before its `_start` returned.
        var completedDuringStart = false
        /// Waiting inners: all of them (queueing), or the latest (throttling).
        var waiting = _FIFO<Signal<R, E>>()
        var outerCompleted = false
        /// An error or disposal happened: nothing more is subscribed.
        var stopped = false
        var slot = _StepSlot()
        var outer: (any Disposable)?

        var hasWaiting: Bool { !waiting.isEmpty }

        mutating func begin() -> Int {
            executing = true
            index += 1
            startReturned = false
            completedDuringStart = false
            return index
        }

        /// The running inner completed: start a waiting one, or go idle.
        mutating func takeNext() -> Next {
            if !stopped, let next = waiting.popFirst() {
                return .start(next, index: begin())
            }
            executing = false
            return outerCompleted && !hasWaiting ? .complete : .none
        }
    }

    let mode: Mode
    private let mutex = _Mutex()
    private var state = State()
    private let currentIndex = Synchronization.Atomic<Int>(0)

    init(mode: Mode) {
        self.mode = mode
    }

    deinit {
        mutex.destroy()
    }

    // MARK: Outer events

    /// Sets the outer subscription's handle (once `_start` returned).
    func setOuter(_ handle: any Disposable) {
        let disposed = mutex.withLock { () -> Bool in
            if state.slot.isDisposed { return true }
            state.outer = handle
            return false
        }
        if disposed { handle.dispose() }
    }

    func outerNext(_ inner: Signal<R, E>, _ downstream: Subscriber<R, E>) {
        let (start, dropped) = mutex.withLock { () -> (Int?, Signal<R, E>?) in
            if state.stopped { return (nil, nil) }
            switch mode {
            case .switching:
                break
            case .queueing:
                if state.executing {
                    state.waiting.append(inner)
                    return (nil, nil)
                }
            case .throttling:
                if state.executing {
                    let dropped = state.waiting.popFirst()
                    state.waiting.append(inner)
                    return (nil, dropped)
                }
            }
            let index = state.begin()
            currentIndex.store(index, ordering: .releasing)
            return (index, nil)
        }
        _ = dropped  // released here, outside the lock
        if let start { run(inner, index: start, downstream) }
    }

    func outerFailed(_ error: E, _ downstream: Subscriber<R, E>) {
        mutex.withLock { state.stopped = true }
        downstream.putError(error)
    }

    func outerCompleted(_ downstream: Subscriber<R, E>) {
        let complete = mutex.withLock { () -> Bool in
            state.outerCompleted = true
            return !state.executing && !state.hasWaiting
        }
        if complete { downstream.putCompletion() }
    }

    // MARK: Inner events

    /// Whether inner `index` is the current one (a replaced inner is silent).
    @inline(__always)
    func isCurrent(_ index: Int) -> Bool {
        currentIndex.load(ordering: .acquiring) == index
    }

    func innerFailed(_ index: Int, _ error: E, _ downstream: Subscriber<R, E>) {
        let current = mutex.withLock { () -> Bool in
            guard state.index == index else { return false }
            state.stopped = true
            return true
        }
        if current { downstream.putError(error) }
    }

    func innerCompleted(_ index: Int, _ downstream: Subscriber<R, E>) {
        let next = mutex.withLock { () -> Next in
            guard state.executing, state.index == index else { return .none }
            guard state.startReturned else {
                if state.outerCompleted && !state.hasWaiting {
                    // Nothing can follow: complete now, inside the callback.
                    state.executing = false
                    return .complete
                }
                // The loop in `run` that is subscribing it goes on.
                state.completedDuringStart = true
                return .none
            }
            let next = state.takeNext()
            if case .start(_, let index) = next { currentIndex.store(index, ordering: .releasing) }
            return next
        }
        perform(next, downstream)
    }

    // MARK: Running inners

    /// Subscribes `first`, then, as long as each inner completes while being
    /// subscribed, the next waiting one.
    private func run(_ first: Signal<R, E>, index firstIndex: Int, _ downstream: Subscriber<R, E>) {
        var signal = first
        var index = firstIndex
        while true {
            let handle = signal._start(_SignalQueueInnerSink(state: self, downstream: downstream, index: index))
            let (toDispose, next) = mutex.withLock { () -> ((any Disposable)?, Next) in
                let toDispose = state.slot.install(handle, step: index)
                // Replaced meanwhile (switching), or still running.
                guard state.index == index else { return (toDispose, .none) }
                guard state.completedDuringStart else {
                    state.startReturned = true
                    return (toDispose, .none)
                }
                state.startReturned = true
                let next = state.takeNext()
                if case .start(_, let index) = next { currentIndex.store(index, ordering: .releasing) }
                return (toDispose, next)
            }
            toDispose?.dispose()
            switch next {
            case .none:
                return
            case .complete:
                downstream.putCompletion()
                return
            case .start(let nextSignal, let nextIndex):
                signal = nextSignal
                index = nextIndex
            }
        }
    }

    private func perform(_ next: Next, _ downstream: Subscriber<R, E>) {
        switch next {
        case .none:
            break
        case .complete:
            downstream.putCompletion()
        case .start(let signal, let index):
            run(signal, index: index, downstream)
        }
    }

    // MARK: Disposal

    /// Disposes the current inner, then the outer; releases the waiting
    /// inners (nothing is subscribed after disposal).
    func dispose() {
        let (current, outer) = mutex.withLock { () -> ((any Disposable)?, (any Disposable)?) in
            state.stopped = true
            defer { state.outer = nil }
            return (state.slot.dispose(), state.outer)
        }
        current?.dispose()
        outer?.dispose()
        var waiting = _FIFO<Signal<R, E>>()
        mutex.withLock { swap(&waiting, &state.waiting) }
        _ = waiting
    }
}

final class _SignalQueueInnerSink<R, E>: _Sink<R, E>, @unchecked Sendable {
    let state: _SignalQueueState<R, E>
    let downstream: Subscriber<R, E>
    let index: Int

    init(state: _SignalQueueState<R, E>, downstream: Subscriber<R, E>, index: Int) {
        self.state = state
        self.downstream = downstream
        self.index = index
    }

    override func putNext(_ value: R) {
        if state.isCurrent(index) { downstream.putNext(value) }
    }

    override func putError(_ error: E) { state.innerFailed(index, error, downstream) }
    override func putCompletion() { state.innerCompleted(index, downstream) }
}

/// The outer sink: `transform` makes the inner signal from each outer value
/// (eagerly, at arrival); `promoteError` converts the outer's error type (nil
/// for an outer that cannot fail, `NoError`).
final class _SignalQueueOuterSink<T, EO, R, E>: _Sink<T, EO>, @unchecked Sendable {
    let state: _SignalQueueState<R, E>
    let downstream: Subscriber<R, E>
    let transform: (T) -> Signal<R, E>
    let promoteError: ((EO) -> E)?

    init(
        state: _SignalQueueState<R, E>,
        downstream: Subscriber<R, E>,
        transform: @escaping (T) -> Signal<R, E>,
        promoteError: ((EO) -> E)?
    ) {
        self.state = state
        self.downstream = downstream
        self.transform = transform
        self.promoteError = promoteError
    }

    override func putNext(_ value: T) { state.outerNext(transform(value), downstream) }
    override func putError(_ error: EO) {
        guard let promoteError else { return }
        state.outerFailed(promoteError(error), downstream)
    }
    override func putCompletion() { state.outerCompleted(downstream) }
}

/// Subscribes `outer` through a signal-of-signals engine in `mode`.
func _signalQueue<T, EO, R, E>(
    _ outer: Signal<T, EO>,
    mode: _SignalQueueState<R, E>.Mode,
    transform: @escaping (T) -> Signal<R, E>,
    promoteError: ((EO) -> E)?
) -> Signal<R, E> {
    Signal { subscriber in
        let state = _SignalQueueState<R, E>(mode: mode)
        state.setOuter(
            outer._start(
                _SignalQueueOuterSink(state: state, downstream: subscriber, transform: transform, promoteError: promoteError)
            )
        )
        return state
    }
}

/// A first-in first-out queue with O(1) amortised `append` and `popFirst`.
struct _FIFO<Element> {
    private var items: [Element?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func append(_ element: Element) {
        items.append(element)
    }

    /// Removes and returns the first element (ownership moves to the caller:
    /// nothing is released here).
    mutating func popFirst() -> Element? {
        guard head < items.count else { return nil }
        let element = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }
}
