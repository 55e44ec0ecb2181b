// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

// Errors: operators that recover from errors, replace them or produce them.
//
// This file: `tryMap`, the throwing transform that replaces ReactiveCocoa's
// `tryMap:` (an `NSError **` block).

// MARK: - tryMap

/// Maps each value with a throwing function; the first error thrown fails
/// the signal with it (RAC's `tryMap:`, with Swift's typed `throws` instead
/// of an `NSError **` out-parameter).
///
/// Marble: `"1-2-3-|"` with `f` throwing at 2 → `"f(1)-#e"`
///
/// ```swift
/// let parsed = lines |> tryMap { (line: String) throws(ParseError) -> Int in try parse(line) }
/// ```
///
/// - Parameters:
///   - transform: called once per value until it throws; its error type is
///     the signal's.
/// - Returns: a function from a signal to the mapped signal.
///
/// - Threading: no thread hop.
/// - Termination: fails with the first thrown error (then the upstream is
///   disposed, and `transform` is not called again); upstream errors and
///   completion are forwarded.
/// - Disposal: returns the upstream handle.
public func tryMap<T, R, E: Error>(_ transform: @escaping @Sendable (T) throws(E) -> R) -> (Signal<T, E>) -> Signal<R, E> {
    _lift("tryMap") { subscriber in
        _TryMapSink<T, R, E, E>(downstream: subscriber, transform: transform, mapError: { $0 })
    }
}

/// Maps each value with a function that throws any error; the first error
/// thrown is converted by `mapError` and fails the signal.
///
/// ReactiveCocoa's `tryMap:`, for untyped throws.
///
/// Marble: `"1-2-3-|"` with `f` throwing `x` at 2 → `"f(1)-#mapError(x)"`
///
/// ```swift
/// let decoded = payloads |> tryMap({ try decoder.decode(Event.self, from: $0) },
///                                  mapError: { RequestError.decoding($0) })
/// ```
///
/// - Parameters:
///   - transform: called once per value until it throws.
///   - mapError: turns the thrown error into the signal's error type.
/// - Returns: a function from a signal to the mapped signal.
///
/// - Threading: no thread hop.
/// - Termination: fails with the first mapped error; upstream errors and
///   completion are forwarded.
/// - Disposal: returns the upstream handle.
public func tryMap<T, R, E>(
    _ transform: @escaping @Sendable (T) throws -> R,
    mapError: @escaping @Sendable (any Error) -> E
) -> (Signal<T, E>) -> Signal<R, E> {
    _lift("tryMap") { subscriber in
        _TryMapSink<T, R, any Error, E>(downstream: subscriber, transform: transform, mapError: mapError)
    }
}

struct _TryMapSink<T, R, Thrown: Error, E>: _PassThroughSink, ~Copyable {
    typealias Input = T
    typealias Output = R
    typealias Failure = E
    let downstream: Subscriber<R, E>
    let transform: (T) throws(Thrown) -> R
    let mapError: (Thrown) -> E
    let failed = Synchronization.Atomic<Bool>(false)

    init(
        downstream: Subscriber<R, E>, transform: @escaping @Sendable (T) throws(Thrown) -> R,
        mapError: @escaping @Sendable (Thrown) -> E
    ) {
        self.transform = transform
        self.mapError = mapError
        self.downstream = downstream
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        guard !failed.load(ordering: .acquiring) else { return }
        let result: R
        do {
            result = try transform(value)
        } catch {
            failed.store(true, ordering: .releasing)
            downstream.putError(mapError(error))
            return
        }
        downstream.putNext(result)
    }
}
