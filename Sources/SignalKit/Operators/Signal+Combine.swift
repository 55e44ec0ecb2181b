// Combine: `combineLatest`.
//
// One engine serves all 27 public forms (arities 2…26 in the generated
// Signal+CombineLatest+Arities.swift, the 2-ary initial-values form and the
// array form below). Storage is typed: the latest values live in one value
// of type `Values` (an n-tuple of Optionals, or `[T?]` for the array form)
// inside the per-subscription state; each input writes its own element
// through a `store` closure, and `combine` turns a fully primed `Values` into
// the output. No `Any`, no casts, no per-input boxes.
//
// An element that is `nil` (the outer Optional) has no value yet; because the
// element type is `T?`, an input of Optional type that sends `nil` stores
// `.some(nil)`, which counts as a value.

/// Emits the latest values of two signals as a tuple, starting from initial
/// values.
///
/// Marble: `"--x---|"`, `"----y-|"` with initial values `1`, `a` →
/// `"(1,a)--(x,a)--(x,y)-|"` (the first tuple is emitted before any input is
/// subscribed).
///
/// - Parameters:
///   - queue: if not nil, each input is wrapped in `deliverOn(queue)`, so the
///     inputs' events are combined and delivered on `queue`. The initial
///     tuple is still emitted synchronously, on the subscribing thread.
///   - s1: the first input.
///   - v1: the value `s1` is assumed to have sent before it sends anything.
///   - s2: the second input.
///   - v2: the value `s2` is assumed to have sent before it sends anything.
/// - Returns: a signal of `(T1, T2)` tuples: `(v1, v2)` first, then one
///   tuple per input value (no de-duplication).
///
/// **Threading:** the initial tuple is emitted synchronously, before the
/// inputs are subscribed (in argument order, on the subscribing thread). A
/// tuple is emitted on the thread of the input value that produced it,
/// outside any lock: with inputs sending concurrently from several threads,
/// downstream may see tuples out of order (each one is consistent, and
/// there is exactly one per input value).
///
/// **Termination:** completes once every input has completed (a completed
/// input keeps contributing its last value). The first error of any input
/// is forwarded; later ones are ignored.
///
/// **Disposal:** termination or disposal disposes the inputs' subscriptions
/// in argument order.
public func combineLatest<T1, T2, E>(
    queue: Queue? = nil,
    _ s1: Signal<T1, E>,
    _ v1: T1,
    _ s2: Signal<T2, E>,
    _ v2: T2
) -> Signal<(T1, T2), E> {
    typealias Input = _CombineLatestInput<(T1?, T2?), (T1, T2), E>
    return _combineLatest(
        inputs: [
            Input(s1, queue: queue) { swap(&$0.0, &$1) },
            Input(s2, queue: queue) { swap(&$0.1, &$1) },
        ],
        initial: (v1, v2),
        primed: true,
        combine: { ($0.0!, $0.1!) }
    )
}

/// Emits the latest values of an array of signals as an array.
///
/// Marble: `["1---2-|", "--a---|"]` → `"--[1,a]-[2,a]-|"`; `[]` → `"([])|"`.
///
/// - Parameters:
///   - queue: if not nil, each input is wrapped in `deliverOn(queue)`, so the
///     inputs' events are combined and delivered on `queue`.
///   - signals: the inputs. An empty array gives a signal that emits `[]`
///     and completes synchronously (`queue` is then not used).
/// - Returns: a signal of arrays (element `i` is the latest value of
///   `signals[i]`): nothing until every input has sent a value, then one
///   array per input value (no de-duplication).
///
/// **Threading:** inputs are subscribed in array order on the subscribing
/// thread. An array is emitted on the thread of the input value that
/// produced it, outside any lock: with inputs sending concurrently from
/// several threads, downstream may see arrays out of order (each one is
/// consistent, and there is exactly one per input value after priming).
///
/// **Termination:** completes once every input has completed (also when some
/// input completed without a value: then no array was ever emitted). The first
/// error of any input is forwarded; later ones are ignored. If an input fails
/// synchronously while being subscribed, the remaining inputs are still
/// subscribed (their events are dropped) and disposed as soon as the
/// subscription is set up.
///
/// **Disposal:** termination or disposal disposes the inputs' subscriptions
/// in array order.
public func combineLatest<T, E>(queue: Queue? = nil, _ signals: [Signal<T, E>]) -> Signal<[T], E> {
    if signals.isEmpty {
        return .single([])
    }
    let inputs = signals.indices.map { index in
        _CombineLatestInput<[T?], [T], E>(signals[index], queue: queue) { swap(&$0[index], &$1) }
    }
    return _combineLatest(
        inputs: inputs,
        initial: [T?](repeating: nil, count: signals.count),
        primed: false,
        combine: { $0.map { $0! } }
    )
}

// MARK: - The engine

/// One input of `combineLatest`: a signal and how to store its values into
/// the combined storage.
struct _CombineLatestInput<Values, R, E> {
    /// Subscribes the input, feeding `state`; returns the input's handle.
    let subscribe: (_CombineLatestState<Values, R, E>) -> _SubscriptionBase

    /// - Parameter store: swaps the input's element of the storage with the
    ///   given Optional (which then holds the previous element, released by
    ///   the caller outside the lock).
    init<T>(_ signal: Signal<T, E>, queue: Queue?, store: @escaping (inout Values, inout T?) -> Void) {
        let source = queue.map { signal |> deliverOn($0) } ?? signal
        subscribe = { state in source._start(_CombineLatestSink(state: state, store: store)) }
    }
}

/// The engine of every `combineLatest`: subscribes `inputs` in order into a
/// shared state whose storage starts as `initial`. If `primed` (every element
/// of `initial` has a value), `combine(initial)` is emitted first, before
/// any input is subscribed.
func _combineLatest<Values, R, E>(
    inputs: [_CombineLatestInput<Values, R, E>],
    initial: Values,
    primed: Bool,
    combine: @escaping (Values) -> R
) -> Signal<R, E> {
    Signal { subscriber in
        let state = _CombineLatestState(
            downstream: subscriber,
            values: initial,
            valueCount: primed ? inputs.count : 0,
            inputCount: inputs.count,
            combine: combine
        )
        if primed {
            subscriber.putNext(combine(initial))
        }
        // Every input is subscribed, even when an earlier one failed
        // synchronously (its events are then dropped by `state`, and the
        // handles are disposed when this generator returns).
        var handles: [_SubscriptionBase] = []
        handles.reserveCapacity(inputs.count)
        for input in inputs {
            handles.append(input.subscribe(state))
        }
        return _CombineLatestDisposable(handles)
    }
}

/// The per-subscription state of `combineLatest`.
///
/// `@unchecked Sendable`: `values`, `valueCount` and `completedCount` are
/// guarded by `mutex`; the rest is immutable. Downstream is called after
/// unlocking.
final class _CombineLatestState<Values, R, E>: @unchecked Sendable {
    let downstream: Subscriber<R, E>
    private let combine: (Values) -> R
    private let inputCount: Int
    private let mutex = _Mutex()
    /// The latest values; nil once the output terminated (first error or
    /// last completion), which also drops every later event.
    private var values: Values?
    /// How many inputs have a value.
    private var valueCount: Int
    /// How many inputs have completed.
    private var completedCount = 0

    init(downstream: Subscriber<R, E>, values: Values, valueCount: Int, inputCount: Int, combine: @escaping (Values) -> R) {
        self.downstream = downstream
        self.values = values
        self.valueCount = valueCount
        self.inputCount = inputCount
        self.combine = combine
    }

    deinit {
        mutex.destroy()
    }

    func putNext<T>(_ value: T, store: (inout Values, inout T?) -> Void) {
        var element: T? = value
        var output: R?
        mutex.lock()
        if values != nil {
            store(&values!, &element)
            // `element` now holds the previous value: none means this is the
            // input's first value.
            if element == nil { valueCount += 1 }
            if valueCount == inputCount { output = combine(values!) }
        }
        mutex.unlock()
        // The previous value is released here, outside the lock.
        withExtendedLifetime(element) {}
        if let output { downstream.putNext(output) }
    }

    func putError(_ error: E) {
        mutex.lock()
        let taken = values
        values = nil
        mutex.unlock()
        guard taken != nil else { return }
        downstream.putError(error)
        withExtendedLifetime(taken) {}
    }

    func inputCompleted() {
        mutex.lock()
        var taken: Values?
        if values != nil {
            completedCount += 1
            if completedCount == inputCount {
                taken = values
                values = nil
            }
        }
        mutex.unlock()
        guard taken != nil else { return }
        downstream.putCompletion()
        withExtendedLifetime(taken) {}
    }
}

/// Feeds one input's events into the shared state.
final class _CombineLatestSink<T, Values, R, E>: _Sink<T, E>, @unchecked Sendable {
    let state: _CombineLatestState<Values, R, E>
    let store: (inout Values, inout T?) -> Void

    init(state: _CombineLatestState<Values, R, E>, store: @escaping (inout Values, inout T?) -> Void) {
        self.state = state
        self.store = store
    }

    override func putNext(_ value: T) { state.putNext(value, store: store) }
    override func putError(_ error: E) { state.putError(error) }
    override func putCompletion() { state.inputCompleted() }
}

/// The inputs' handles, disposed in subscription order.
///
/// `Sendable`: immutable; disposing a subscription is thread-safe.
final class _CombineLatestDisposable: Disposable {
    let handles: [_SubscriptionBase]

    init(_ handles: [_SubscriptionBase]) {
        self.handles = handles
    }

    func dispose() {
        for handle in handles {
            handle.dispose()
        }
    }
}
