// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The shell shared by the operators whose subscription is one upstream
/// subscription through one sink: for each subscriber, `makeSink` builds the
/// sink (stored in the upstream subscription's tail, see `_InlineSink`), the
/// upstream is started with it, and its handle is the disposable. The result
/// is named `[upstream] -name` for debugging (see `_derived`).
///
/// ```swift
/// // not compiled: internal API
/// public func take<T, E>(_ count: Int) -> (Signal<T, E>) -> Signal<T, E> {
///     _lift("take", arguments: "\(count)") { subscriber in _TakeSink(downstream: subscriber, limit: count) }
/// }
/// ```
func _lift<T, E, R, F, S: _InlineSink & SendableMetatype & ~Copyable>(
    _ name: StaticString,
    arguments: @escaping @autoclosure () -> String? = nil,
    _ makeSink: @escaping @Sendable (Subscriber<R, F>) -> S
) -> (Signal<T, E>) -> Signal<R, F> where S.Input == T, S.Failure == E {
    { signal in
        Signal { subscriber in
            signal._start(makeSink(subscriber))
        }._derived(name, from: signal, arguments: arguments())
    }
}

/// `_lift` for the operators that take their signal as an argument
/// (`collect`, `ignoreValues`, `last`, …): the same shell, applied to
/// `signal` at once.
func _lift<T, E, R, F, S: _InlineSink & SendableMetatype & ~Copyable>(
    _ signal: Signal<T, E>,
    _ name: StaticString,
    _ makeSink: @escaping @Sendable (Subscriber<R, F>) -> S
) -> Signal<R, F> where S.Input == T, S.Failure == E {
    Signal { subscriber in
        signal._start(makeSink(subscriber))
    }._derived(name, from: signal)
}
