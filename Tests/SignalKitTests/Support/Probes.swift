// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Synchronization

/// An object whose release a test observes through a weak reference.
final class Probe: @unchecked Sendable {
    let name: String
    let onDeinit: (@Sendable (String) -> Void)?

    init(_ name: String = "probe", onDeinit: (@Sendable (String) -> Void)? = nil) {
        self.name = name
        self.onDeinit = onDeinit
    }

    deinit { onDeinit?(name) }

    func touch() {}
}

/// A disposable that counts `dispose()` calls (every call, like a legacy
/// counting disposable) and can run an action while being disposed.
final class CountingDisposable: Disposable, @unchecked Sendable {
    private let count = Atomic<Int>(0)
    let onDispose: (() -> Void)?

    init(onDispose: (() -> Void)? = nil) {
        self.onDispose = onDispose
    }

    var disposeCount: Int { count.load(ordering: .acquiring) }

    func dispose() {
        count.add(1, ordering: .acquiringAndReleasing)
        onDispose?()
    }
}

/// A weak reference readable from a `@Sendable` context.
final class WeakBox<T: AnyObject>: @unchecked Sendable {
    weak var value: T?
    init(_ value: T?) { self.value = value }
}
