// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// A signal that sends `value` and completes (`Signal.single`).
public func single<T: Sendable, E>(_ value: T, _ errorType: E.Type) -> Signal<T, E> {
    Signal<T, E>.single(value)
}

/// A signal that fails at once with `error` (`Signal.fail`).
public func fail<T, E: Sendable>(_ valueType: T.Type, _ error: E) -> Signal<T, E> {
    Signal<T, E>.fail(error)
}

/// A signal that completes at once (`Signal.complete`).
public func complete<T, E>(_ valueType: T.Type, _ error: E.Type) -> Signal<T, E> {
    Signal<T, E>.complete()
}

/// A signal that never sends anything (`Signal.never`).
public func never<T, E>(_ valueType: T.Type, _ error: E.Type) -> Signal<T, E> {
    Signal<T, E>.never()
}
