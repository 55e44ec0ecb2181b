// Sinks shared by many operators.

/// Forwards every event to a downstream subscriber unchanged.
final class _ForwardSink<T, E>: _Sink<T, E>, @unchecked Sendable {
    let downstream: Subscriber<T, E>

    init(downstream: Subscriber<T, E>) {
        self.downstream = downstream
    }

    override func putNext(_ value: T) { downstream.putNext(value) }
    override func putError(_ error: E) { downstream.putError(error) }
    override func putCompletion() { downstream.putCompletion() }
}
