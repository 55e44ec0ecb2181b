// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// One event of a signal, as a value (see `dematerialize` / `materialize`).
public enum SignalEvent<T, E> {
    case Next(T)
    case Error(E)
    case Completion
}

extension SignalEvent: Sendable where T: Sendable, E: Sendable {}

extension SignalEvent: Equatable where T: Equatable, E: Equatable {}
