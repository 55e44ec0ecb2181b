// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The run-again gate shared by every loop that subscribes signals one after
/// another without growing the stack: the step trampoline (`then`,
/// `restart`, `repeat`, `restartIfError`), the feedback loop (`recurse`),
/// `flatten`'s start loop, the switch/queue/throttle engine, the bounded
/// `queue` and `reduceLeft`'s generator loop.
///
/// The problem they share: subscribing a signal can, synchronously and on
/// the same thread, produce the reason to subscribe the next one (a step
/// completes while being subscribed). Doing that subscription right there
/// nests one frame per step; a million synchronous steps overflow the stack.
/// So exactly one frame — the *loop* — subscribes, and a reason that arrives
/// while it runs is only recorded; the loop sees it after its subscription
/// returns and takes another turn.
///
/// The protocol, every call made by the owner with its lock held:
///
/// 1. `enter()` when a subscription is due: `true` means the caller is now
///    the loop and must subscribe; `false` means a loop is running and will
///    take another turn (the request is recorded).
/// 2. `markDue()` when a reason to subscribe again arrives that the owner
///    handles without `enter()` (a completion observed inside a
///    subscription).
/// 3. After each subscription returns, `takeTurn()` (or
///    `takeTurn(unless:)`, when the owner has a reason to stop): `true`
///    means another turn is due and the loop goes on; `false` means the loop
///    has ended, and the next `enter()` starts a new one. (The switch engine,
///    the bounded `queue` and `reduceLeft` begin each subscription with
///    `restart()`, end it with `endTurn()`, and restart when a next one is
///    waiting.)
/// 4. `leave()` when the loop ends early (the downstream ended): drops any
///    recorded request.
///
/// A plain value of two flags, stored inside its owner's locked state: no
/// allocation, no atomics of its own.
@usableFromInline
struct _RunAgainGate: Sendable {
    /// A frame is running the loop.
    @usableFromInline private(set) var isRunning = false
    /// Another turn was requested while the loop ran.
    @usableFromInline private(set) var isDue = false

    @inlinable init() {}

    /// Claims the loop, or records a request for another turn if a frame
    /// runs it. Returns whether the caller must run the loop.
    @inlinable
    mutating func enter() -> Bool {
        if isRunning {
            isDue = true
            return false
        }
        isRunning = true
        return true
    }

    /// Starts a loop whatever the gate recorded before: for owners whose
    /// requests are numbered (the switch engine starts a new loop for each
    /// new inner, and the older loop sees the number change and ends).
    @inlinable
    mutating func restart() {
        isRunning = true
        isDue = false
    }

    /// Records that another turn is due.
    @inlinable
    mutating func markDue() {
        isDue = true
    }

    /// At the end of a turn: whether another one is due. If not, or if
    /// `stop` holds, the loop ends (the gate is open for the next `enter`).
    @inlinable
    mutating func takeTurn(unless stop: Bool = false) -> Bool {
        if isDue && !stop {
            isDue = false
            return true
        }
        leave()
        return false
    }

    /// Ends the turn and the loop; returns whether another turn was
    /// requested meanwhile. For owners that start the next turn themselves,
    /// with `restart()`, when there is one.
    @inlinable
    mutating func endTurn() -> Bool {
        defer { leave() }
        return isDue
    }

    /// Ends the loop and drops any recorded request.
    @inlinable
    mutating func leave() {
        isRunning = false
        isDue = false
    }
}
