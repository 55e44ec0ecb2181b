// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Keyed subscriptions to upstream signals (SwiftSignalKit's `Multicast`).
///
/// Compatibility note: SwiftSignalKit's implementation never records the
/// per-key instance it creates, so every `get(key:signal:)` subscription
/// starts its own upstream subscription and receives only that upstream's
/// values; SignalKit behaves the same. Upstream completion and errors are
/// not forwarded. Unlike SwiftSignalKit, SignalKit disposes the upstream
/// subscription when its last subscriber leaves. For one upstream shared by
/// many subscribers, use `publish`/`multicast` and a connection, or a
/// `Promise`.
public final class Multicast<T>: Sendable {
    public init() {}

    public func get(key: String, signal: Signal<T, NoError>) -> Signal<T, NoError> {
        Signal { subscriber in
            let instance = _MulticastInstance(signal: signal)
            return instance.add(subscriber)
        }
    }
}

/// One upstream subscription feeding a bag of subscribers.
private final class _MulticastInstance<T>: @unchecked Sendable {
    // `@unchecked Sendable`: `subscribers` is CSignalRuntime's bag; `started`
    // is guarded by `_LockedState`; `upstream` is a MetaDisposable.
    private let signal: Signal<T, NoError>
    private let subscribers = _SubscriberBag<Subscriber<T, NoError>>()
    private let upstream = MetaDisposable()
    private let started = _LockedState(false)

    init(signal: Signal<T, NoError>) {
        self.signal = signal
    }

    func add(_ subscriber: Subscriber<T, NoError>) -> any Disposable {
        guard let key = subscribers.insert(subscriber) else { return EmptyDisposable }
        let start = started.withLock { started in
            defer { started = true }
            return !started
        }
        if start {
            upstream.set(
                signal.start(next: { [weak self] value in
                    self?.subscribers.forEach { $0.putNext(value) }
                })
            )
        }
        return ActionDisposable {
            self.subscribers.remove(key)
            if self.subscribers.isEmpty {
                self.upstream.dispose()
            }
        }
    }
}

/// A plain holder SwiftSignalKit code builds its own multicasting on.
///
/// `Sendable` when `T` is, provided its users guard `value` and
/// `subscribers` with `lock`, as SwiftSignalKit code does.
public final class MulticastPromise<T> {
    public let subscribers = Bag<@Sendable (T) -> Void>()
    public let lock = Lock()
    public var value: T?

    public init() {}
}

// `@unchecked`: `value` and `subscribers` are guarded by `lock` by contract.
extension MulticastPromise: @unchecked Sendable where T: Sendable {}
