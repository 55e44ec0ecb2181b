// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// How a ``Command`` execution failed: the command was not enabled (nothing
/// ran), or the work failed.
public enum CommandError<E> {
    /// `execute(_:)` was called while the command was not enabled; the work
    /// was not started. The reason says why (RAC's
    /// `RACCommandErrorNotEnabled`).
    case notEnabled(CommandDisabledReason)
    /// The work signal failed with this error.
    case executionFailed(E)
}

/// Why a ``Command`` was not enabled when `execute(_:)` was called.
public enum CommandDisabledReason: Hashable, Sendable, CustomStringConvertible {
    /// The command's `enabled` input signal last sent `false`.
    case enabledSignalIsFalse
    /// An execution is still running and `allowsConcurrentExecution` is
    /// false.
    case alreadyExecuting

    /// The reason in words, as used by ``CommandError``'s description.
    public var description: String {
        switch self {
        case .enabledSignalIsFalse:
            return "its enabled signal last sent false"
        case .alreadyExecuting:
            return "an execution is still running and allowsConcurrentExecution is false "
                + "(set allowsConcurrentExecution to true to allow overlapping executions)"
        }
    }
}

extension CommandError: CustomStringConvertible {
    /// `"Command is not enabled: <reason>; execute(_:) did not start the work"`
    /// or `"Command execution failed: <error>"`.
    public var description: String {
        switch self {
        case .notEnabled(let reason):
            return "Command is not enabled: \(reason); execute(_:) did not start the work"
        case .executionFailed(let error):
            return "Command execution failed: \(error)"
        }
    }
}

extension CommandError: Equatable where E: Equatable {}

extension CommandError: Hashable where E: Hashable {}

extension CommandError: Sendable where E: Sendable {}

extension CommandError: Error where E: Error {}
