// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// A terminal event that waits behind values: in a bounded boundary's buffer
// (Boundaries/BoundaryState.swift) and in the serial delivery's FIFO
// (SerialDelivery.swift).

/// A terminal event waiting behind the values.
enum _BoundaryTerminal<E> {
    case completed
    case failed(E)
}

extension _BoundaryTerminal: Sendable where E: Sendable {}

/// A terminal event in a box: a reference, so that the state holding it has
/// a fixed layout whatever `E` is (the bounded buffers', the serial
/// delivery's).
final class _BoundaryTerminalBox<E> {
    let event: _BoundaryTerminal<E>

    init(_ event: _BoundaryTerminal<E>) {
        self.event = event
    }
}

// `@unchecked`: immutable, and its event is `Sendable` when `E` is.
extension _BoundaryTerminalBox: @unchecked Sendable where E: Sendable {}
