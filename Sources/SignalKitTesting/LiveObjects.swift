// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Synchronization

/// A snapshot of SignalKit's live-object counters.
public struct LiveObjectCounts: Equatable, Sendable, CustomStringConvertible {
    public var subscriptions: Int
    public var bags: Int
    public var bagArrays: Int
    public var retiredBagItems: Int
    public var retiredBagArrays: Int
    public var trackedObjects: Int

    /// The counters now. Subscriptions are counted only while
    /// `SignalKitDebug.isTrackingLiveObjects` is on (`LeakCheck` switches it on).
    public static var current: LiveObjectCounts {
        LiveObjectCounts(
            subscriptions: SignalKitDebug.liveSubscriptions,
            bags: SignalKitDebug.liveBags,
            bagArrays: SignalKitDebug.liveBagArrays,
            retiredBagItems: SignalKitDebug.retiredBagItems,
            retiredBagArrays: SignalKitDebug.retiredBagArrays,
            trackedObjects: TrackedObject.liveCount
        )
    }

    public var description: String {
        "subscriptions \(subscriptions), bags \(bags), bag arrays \(bagArrays), "
            + "retired bag items \(retiredBagItems), retired bag arrays \(retiredBagArrays), "
            + "tracked objects \(trackedObjects)"
    }
}

/// Compares live-object counters before and after a piece of work.
///
/// ```swift
/// let check = LeakCheck()
/// do { ... create and dispose subscriptions ... }
/// #expect(check.leaks() == nil)
/// ```
///
/// Counters are process-wide: run leak-checked tests serially (Swift
/// Testing: `.serialized`), or other tests' objects show up as leaks.
public struct LeakCheck: Sendable {
    public let before: LiveObjectCounts

    public init() {
        SignalKitDebug.isTrackingLiveObjects = true
        before = .current
    }

    /// nil if every counter is back to its starting value; otherwise a
    /// message naming the counters that differ. Waits up to `timeout`
    /// seconds for objects released asynchronously (by queues) to go.
    public func leaks(timeout: Double = 2.0) -> String? {
        var now = LiveObjectCounts.current
        var waited = 0.0
        while now != before && waited < timeout {
            usleepSeconds(0.001)
            waited += 0.001
            now = .current
        }
        return now == before ? nil : "live objects before: \(before); after: \(now)"
    }
}

/// An object that counts its live instances, to capture in closures and
/// check that they were released.
public final class TrackedObject: Sendable {
    private static let live = Synchronization.Atomic<Int>(0)

    public let name: String

    public init(_ name: String = "") {
        self.name = name
        TrackedObject.live.add(1, ordering: .relaxed)
    }

    deinit {
        TrackedObject.live.subtract(1, ordering: .relaxed)
    }

    /// Live `TrackedObject`s in the process.
    public static var liveCount: Int { live.load(ordering: .relaxed) }
}
