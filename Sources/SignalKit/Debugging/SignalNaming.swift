// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

// Debugging, part 1: names and descriptions of signals (ReactiveCocoa's
// `name`, `setNameWithFormat:` and `[[source] -map:] -filter:` descriptions).
//
// Cost model. A signal stores its generator and an optional composition
// record (`Signal.composition`). Names live in that record, in a
// `_DebugComposition`, so an ordinary signal carries nothing extra:
//
// * Naming off (the default): every operator that builds a signal makes one
//   relaxed atomic load, at construction, and attaches nothing. No string is
//   formatted, nothing is allocated. Subscriptions and events never look at
//   names.
// * Naming on (`SIGNALKIT_DEBUG_SIGNAL_NAMES=1`, `SignalKitDebug.isNamingSignals`,
//   or `SignalKitDebug.withSignalNaming { … }` for the calling thread): each
//   operator allocates one record holding its name, its formatted arguments
//   and its inputs. The second `Signal` object it returns shares the
//   generator, so subscribing and delivering cost exactly what they cost with
//   naming off.
// * `named(_:)` always attaches its name (the caller asked for it, and a
//   literal costs nothing to format), with the `#fileID` and `#line` of the
//   call.

// MARK: - Switches

extension SignalKitDebug {
    /// Whether operators record their names, so that `description` shows how a
    /// signal was built (`[[login] -map] -filter`).
    ///
    /// Starts as `true` when the environment variable
    /// `SIGNALKIT_DEBUG_SIGNAL_NAMES` is set to anything but `0` or an empty
    /// string (ReactiveCocoa's `RAC_DEBUG_SIGNAL_NAMES`). Changing it affects
    /// signals built afterwards, on every thread. Prefer `withSignalNaming(_:)`
    /// in tests: it does not affect other threads.
    public static var isNamingSignals: Bool {
        get { _SignalNaming.flags.load(ordering: .relaxed) & _SignalNaming.naming != 0 }
        set { _SignalNaming.set(_SignalNaming.naming, newValue) }
    }

    /// Runs `body` with operator naming switched on for the calling thread
    /// only (signals built on other threads meanwhile are not named, unless
    /// `isNamingSignals` is on). Nests.
    public static func withSignalNaming<R>(_ body: () throws -> R) rethrows -> R {
        _SignalNaming.enterScope()
        defer { _SignalNaming.leaveScope() }
        return try body()
    }
}

enum _SignalNaming {
    /// The process-wide switches: `naming` (`isNamingSignals`) and
    /// `inspecting` (`isInspecting`, which names too), in one word so that
    /// an operator built with both off makes one load.
    static let flags = Synchronization.Atomic<UInt8>(
        (flagFromEnvironment("SIGNALKIT_DEBUG_SIGNAL_NAMES") ? naming : 0)
            | (flagFromEnvironment("SIGNALKIT_INSPECT") ? inspecting : 0))
    static let naming: UInt8 = 1
    static let inspecting: UInt8 = 2

    static func set(_ flag: UInt8, _ on: Bool) {
        if on {
            flags.bitwiseOr(flag, ordering: .relaxed)
        } else {
            flags.bitwiseAnd(~flag, ordering: .relaxed)
        }
    }

    /// How many `withSignalNaming` scopes are open on any thread: while zero,
    /// the per-thread flag is not even looked at.
    static let scopes = Synchronization.Atomic<Int>(0)

    /// The calling thread's `withSignalNaming` depth.
    private static let threadDepth = _ThreadDepth(.namingScopeDepth)

    /// Whether the environment variable `name` is set to anything but `0`
    /// or an empty string.
    static func flagFromEnvironment(_ name: String) -> Bool {
        guard let raw = getenv(name) else { return false }
        let value = String(cString: raw)
        return !value.isEmpty && value != "0"
    }

    /// Whether a signal built now on this thread records its name: one
    /// relaxed load in the common case.
    @inline(__always)
    static var isOn: Bool {
        if flags.load(ordering: .relaxed) != 0 { return true }
        guard scopes.load(ordering: .relaxed) > 0 else { return false }
        return threadDepth.value > 0
    }

    static func enterScope() {
        threadDepth.add(1)
        scopes.add(1, ordering: .relaxed)
    }

    static func leaveScope() {
        scopes.subtract(1, ordering: .relaxed)
        threadDepth.add(-1)
    }
}

/// A nesting depth per thread (the `with…` scopes), kept in a thread slot.
struct _ThreadDepth: Sendable {
    private let slot: _ThreadSlot

    init(_ slot: _ThreadSlot) {
        self.slot = slot
    }

    /// The calling thread's depth (0 on a thread that never entered).
    var value: Int { slot.integer }

    func add(_ delta: Int) {
        slot.integer = value + delta
    }
}

// MARK: - The record

/// Anything whose description can appear in a signal's description chain.
/// Only `Signal` conforms.
@usableFromInline
protocol _SignalDescribable: AnyObject, Sendable {
    var description: String { get }
    var _debugInfo: _SignalDebugInfo? { get }
}

/// Where `named(_:)` was called.
public struct SignalSourceLocation: Equatable, Hashable, Sendable, CustomStringConvertible {
    /// `#fileID` of the call: `Module/File.swift`.
    public let fileID: String
    /// `#line` of the call.
    public let line: Int

    public init(fileID: String, line: Int) {
        self.fileID = fileID
        self.line = line
    }

    /// `Module/File.swift:42`
    public var description: String { "\(fileID):\(line)" }
}

/// How a named signal was built.
///
/// `@unchecked Sendable`: `kind` is written only by `deinit`.
@usableFromInline
final class _SignalDebugInfo: @unchecked Sendable {
    enum Kind: Sendable {
        /// `named(_:)`: the name replaces the description of the input.
        case named(String, location: SignalSourceLocation)
        /// `input |> op(arguments)`: `[input] -op: arguments`.
        case unary(operatorName: String, arguments: String?, input: any _SignalDescribable)
        /// A signal built from several inputs or none: `+op: (a, b)` or
        /// `+op: arguments`.
        case combining(operatorName: String, arguments: String?, inputs: [any _SignalDescribable])
    }

    private(set) var kind: Kind

    init(_ kind: Kind) {
        self.kind = kind
    }

    deinit {
        // A record holds its inputs, which hold their records: releasing a
        // chain of a million named operators would recurse a million times.
        // Hand the inputs to the releasing loop `then` chains use (it drains
        // them iteratively, once per thread).
        var held: [AnyObject] = []
        switch kind {
        case .named:
            return
        case .unary(_, _, let input):
            held.append(input)
        case .combining(_, _, let inputs):
            held.append(contentsOf: inputs.map { $0 as AnyObject })
        }
        kind = .named("", location: SignalSourceLocation(fileID: "", line: 0))
        _IterativeRelease.release(&held)
    }

    /// The description chain. Unary links are walked with a loop (a chain of
    /// a million operators does not recurse a million times).
    func render() -> String {
        var suffixes: [String] = []
        var current: _SignalDebugInfo? = self
        var head = ""
        while let info = current {
            switch info.kind {
            case .named(let name, _):
                head = name
                current = nil
            case .unary(let name, let arguments, let input):
                suffixes.append(" -" + name + (arguments.map { ": " + $0 } ?? ""))
                if let next = input._debugInfo {
                    current = next
                } else {
                    head = input.description
                    current = nil
                }
            case .combining(let name, let arguments, let inputs):
                var text = "+" + name
                if !inputs.isEmpty {
                    text += ": (" + inputs.map(\.description).joined(separator: ", ") + ")"
                    if let arguments { text += " " + arguments }
                } else if let arguments {
                    text += ": " + arguments
                }
                head = text
                current = nil
            }
        }
        var result = head
        for suffix in suffixes.reversed() {
            result = "[" + result + "]" + suffix
        }
        return result
    }
}

/// A signal's composition record carrying its debug name. Wraps the record
/// the signal had before (a `then` chain, a `deferred` factory) so that the
/// operators that read it still see it (`_structural`).
final class _DebugComposition<T, E>: _SignalComposition<T, E>, @unchecked Sendable {
    // `@unchecked Sendable`: immutable.
    let info: _SignalDebugInfo
    let inner: _SignalComposition<T, E>?

    init(info: _SignalDebugInfo, inner: _SignalComposition<T, E>?) {
        self.info = info
        self.inner = inner
    }

    override var _structural: _SignalComposition<T, E>? { inner }
    override var _debugRecord: AnyObject? { info }
}

// MARK: - Attaching names (used by every operator)

extension Signal: _SignalDescribable {
    @usableFromInline
    var _debugInfo: _SignalDebugInfo? {
        // Only `_DebugComposition` returns a record, always a `_SignalDebugInfo`.
        composition?._debugRecord.map { unsafeDowncast($0, to: _SignalDebugInfo.self) }
    }

    /// A signal with the same generator and the given debug record.
    private func _withDebugInfo(_ info: _SignalDebugInfo) -> Signal<T, E> {
        Signal(composition: _DebugComposition(info: info, inner: composition?._structural), generator)
    }

    /// Names `self` as `[upstream] -op: arguments` when naming is on; returns
    /// `self` untouched (one relaxed load) when it is off. `arguments` is
    /// only evaluated when naming is on.
    @usableFromInline
    func _derived<U, F>(
        _ operatorName: StaticString,
        from upstream: Signal<U, F>,
        arguments: @autoclosure () -> String? = nil
    ) -> Signal<T, E> {
        guard _SignalNaming.isOn else { return self }
        return _withDebugInfo(
            _SignalDebugInfo(.unary(operatorName: "\(operatorName)", arguments: arguments(), input: upstream))
        )
    }

    /// Names `self` as `+op: (inputs…) arguments` when naming is on.
    @usableFromInline
    func _combined(
        _ operatorName: StaticString,
        inputs: @autoclosure () -> [any _SignalDescribable],
        arguments: @autoclosure () -> String? = nil
    ) -> Signal<T, E> {
        guard _SignalNaming.isOn else { return self }
        return _withDebugInfo(
            _SignalDebugInfo(.combining(operatorName: "\(operatorName)", arguments: arguments(), inputs: inputs()))
        )
    }

    /// Attaches an explicit name, whatever the naming switch says.
    func _named(_ name: String, location: SignalSourceLocation) -> Signal<T, E> {
        _withDebugInfo(_SignalDebugInfo(.named(name, location: location)))
    }
}

/// Formats an operator argument for a description chain.
@usableFromInline
func _debugArgument(_ value: Any) -> String {
    String(describing: value)
}

// MARK: - Public API

extension Signal: CustomStringConvertible, CustomDebugStringConvertible {
    /// How the signal was built, ReactiveCocoa style: `[[login] -map] -filter`.
    ///
    /// A signal named with `named(_:)` is described by its name. A signal
    /// built by an operator while naming was on (see
    /// `SignalKitDebug.isNamingSignals`) is described by its input's
    /// description and the operator: `[input] -op: arguments`, or
    /// `+op: (input1, input2)` for operators that combine signals and for
    /// factories (`+single: 1`). Any other signal is described by its type,
    /// `Signal<Int, NoError>`.
    public var description: String {
        _debugInfo?.render() ?? "Signal<\(T.self), \(E.self)>"
    }

    /// `description`, followed by where the signal was named, if it was:
    /// `login (App/Login.swift:12)`.
    public var debugDescription: String {
        if let location = nameLocation {
            return "\(description) (\(location))"
        }
        return description
    }

    /// The name given with `named(_:)`, if this signal is a named signal.
    public var name: String? {
        if case .named(let name, _)? = _debugInfo?.kind { return name }
        return nil
    }

    /// Where `named(_:)` named this signal (`#fileID` and `#line` of the call).
    public var nameLocation: SignalSourceLocation? {
        if case .named(_, let location)? = _debugInfo?.kind { return location }
        return nil
    }
}

/// Gives the signal a name for debugging: its `description` becomes `name`,
/// and the `#fileID` and `#line` of this call are recorded (`nameLocation`,
/// `debugDescription`). ReactiveCocoa's `setNameWithFormat:`.
///
/// Marble: `"a-b-|"` → `"a-b-|"` (same events)
///
/// ```swift
/// let login = request |> named("login")
/// print(login)                          // login
/// print(login |> logAll())              // log lines start with "login"
/// ```
///
/// Unlike ReactiveCocoa's `setNameWithFormat:`, which does nothing unless
/// `RAC_DEBUG_SIGNAL_NAMES` is set, `named` always names: the name is a ready
/// string, so it costs one small allocation when the signal is built and
/// nothing afterwards. Operators applied to a named signal derive their
/// descriptions from it only while naming is on.
///
/// - Parameters:
///   - name: the signal's name.
///   - fileID: defaults to the caller's `#fileID`.
///   - line: defaults to the caller's `#line`.
/// - Returns: a function from a signal to the same signal, named.
///
/// - Threading: no stage is added: the named signal shares the input's
///   generator, so subscriptions and events are exactly the input's.
/// - Termination: unchanged.
/// - Disposal: unchanged.
public func named<T, E>(
    _ name: String,
    fileID: String = #fileID,
    line: Int = #line
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        let location = SignalSourceLocation(fileID: fileID, line: line)
        if _SignalInspection.isOn { return signal._inspected(name, location: location) }
        return signal._named(name, location: location)
    }
}
