// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The error type of a signal that never fails. Uninhabited.
public enum NoError: Sendable {}

/// The value type of a signal that never sends a value. Uninhabited.
public enum NoValue: Sendable {}
