// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Misuse checks whose message survives an optimised build.
//
// `precondition` and `preconditionFailure` still stop the process in `-O`
// builds, but print no message there: a server built in release mode would
// stop with no word of what went wrong. SignalKit's rule is that a misuse
// stops with a message naming the misuse and its fix, so every check a user
// can trip goes through these two functions, which use `fatalError` (its
// message is printed in every configuration). Checks of SignalKit's own
// invariants, which no user code can trip, may use `precondition`, marked
// `// invariant` on the line (scripts/soundness checks the mark).

/// Stops the process with `message` unless `condition` holds: a check of how
/// SignalKit is used, whose message is printed in release builds too.
///
/// The condition is evaluated once; the message only when it fails.
@inline(__always)
package func _signalKitRequire(
    _ condition: Bool,
    _ message: @autoclosure () -> String,
    file: StaticString = #fileID,
    line: UInt = #line
) {
    if !condition {
        _signalKitMisuse(message(), file: file, line: line)
    }
}

/// Stops the process with `message`, printed in release builds too: a misuse
/// SignalKit cannot recover from (see ``_signalKitRequire(_:_:file:line:)``).
@inline(never)
package func _signalKitMisuse(_ message: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
    fatalError(message, file: file, line: line)
}
