// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Transforming: operators that turn each value (or error) into another.
// This file: ReactiveCocoa's `groupBy:` / `groupBy:transform:`: splits a
// signal into one hot signal per key.

/// One group of `groupBy`: its key and the hot signal of its values (RAC's
/// `RACGroupedSignal`).
///
/// `@unchecked Sendable`: immutable; the signal is a `Subject`'s.
public final class GroupedSignal<K: Sendable, T, E>: Sendable {
    /// The key shared by the group's values.
    public let key: K
    /// The group's values: hot (a `Subject`'s signal). Subscribe in the
    /// callback that receives the group to get its first value.
    public let signal: Signal<T, E>

    init(key: K, signal: Signal<T, E>) {
        self.key = key
        self.signal = signal
    }
}

/// Splits the values into groups by key: sends a `GroupedSignal` the first
/// time a key is seen, then sends each value (transformed) on its group
/// (RAC's `groupBy:transform:`).
///
/// Marble: `"a1-b1-a2-|"` by letter → `"A-B--|"` with group A `"1--2-|"`,
/// group B `"1---|"`
///
/// ```swift
/// let perUser = requests |> groupBy({ $0.user }, transform: { $0.path })
///     |> flattenMap { group in group.signal |> map { "\(group.key): \($0)" } }
/// ```
///
/// - Parameters:
///   - key: computes a value's group key (called outside any lock).
///   - transform: the value sent on the group.
/// - Returns: a function from a signal to the signal of its groups.
///
/// - Threading: no thread hop; a new group is sent before its first value,
///   on the delivering thread, so subscribing to `group.signal` inside that
///   callback receives every value of the group.
/// - Termination: the upstream's completion or error is sent to every group
///   first, then to the result.
/// - Disposal: returns the upstream handle. Disposing leaves the groups open
///   (they are hot signals that simply receive nothing more).
public func groupBy<T, K: Hashable & Sendable, V, E>(
    _ key: @escaping @Sendable (T) -> K,
    transform: @escaping @Sendable (T) -> V
) -> (Signal<T, E>) -> Signal<GroupedSignal<K, V, E>, E> {
    _lift("groupBy") { subscriber in
        _GroupBySink(downstream: subscriber, key: key, transform: transform)
    }
}

/// `groupBy(_:transform:)` without a transform (RAC's `groupBy:`).
///
/// Marble: `"a1-b1-a2-|"` by letter → `"A-B--|"` with group A `"a1--a2-|"`
///
/// - Parameters:
///   - key: computes a value's group key.
/// - Returns: a function from a signal to the signal of its groups.
///
/// - Threading: as `groupBy(_:transform:)`.
/// - Termination: as `groupBy(_:transform:)`.
/// - Disposal: as `groupBy(_:transform:)`.
public func groupBy<T, K: Hashable & Sendable, E>(
    _ key: @escaping @Sendable (T) -> K
) -> (Signal<T, E>) -> Signal<GroupedSignal<K, T, E>, E> {
    groupBy(key, transform: { $0 })
}

struct _GroupBySink<T, K: Hashable & Sendable, V, E>: _InlineSink {
    typealias Input = T
    typealias Failure = E

    let downstream: Subscriber<GroupedSignal<K, V, E>, E>
    let key: (T) -> K
    let transform: (T) -> V
    let groups = _GuardedValue<(table: [K: Subject<V, E>], order: [Subject<V, E>])>(([:], []))

    init(
        downstream: Subscriber<GroupedSignal<K, V, E>, E>, key: @escaping @Sendable (T) -> K,
        transform: @escaping @Sendable (T) -> V
    ) {
        self.downstream = downstream
        self.key = key
        self.transform = transform
    }

    func putNext(_ value: T, from _: _SubscriptionBase) {
        let groupKey = key(value)
        let (subject, isNew) = groups.withLock { groups -> (Subject<V, E>, Bool) in
            if let existing = groups.table[groupKey] { return (existing, false) }
            let subject = Subject<V, E>()
            groups.table[groupKey] = subject
            groups.order.append(subject)
            return (subject, true)
        }
        if isNew {
            downstream.putNext(GroupedSignal(key: groupKey, signal: Self.groupSignal(subject)))
        }
        subject.putNext(transform(value))
    }

    func putError(_ error: E) {
        for subject in takeGroups() {
            subject.putError(error)
        }
        downstream.putError(error)
    }

    func putCompletion() {
        for subject in takeGroups() {
            subject.putCompletion()
        }
        downstream.putCompletion()
    }

    /// A group's signal holds its subject's state weakly. The groupBy
    /// subscription owns the groups; a closure that captures the group (as
    /// in `group.signal |> map { "\(group.key): \($0)" }`) would otherwise
    /// keep the group's subscriptions alive through a reference cycle
    /// (subject state → its subscribers → their callbacks → the group → its
    /// signal → the subject state) after the upstream let go of the groupBy
    /// subscription. Subscribing once the subject is gone ends silently, as
    /// subscribing to a terminated subject does.
    private static func groupSignal(_ subject: Subject<V, E>) -> Signal<V, E> {
        Signal { [weak core = subject.core] subscriber in
            core?.subscribe(subscriber) ?? EmptyDisposable
        }
    }

    /// The groups in creation order; the table is emptied (released outside
    /// the lock).
    private func takeGroups() -> [Subject<V, E>] {
        groups.exchange(([:], [])).order
    }
}
