// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

internal import CSignalRuntime
import Synchronization

/// Live-object counters, for leak tests and production diagnostics.
///
/// Swift-side counters cost nothing until tracking is switched on (a relaxed
/// load per create/destroy); then each create/destroy is one relaxed atomic
/// add. The C runtime's counters are always on.
public enum SignalKitDebug {
    /// Switches counting of Swift-side objects (subscriptions) on or off.
    /// An object is counted if tracking was on when it was created, and then
    /// uncounted when it is destroyed, so the count never goes negative.
    public static var isTrackingLiveObjects: Bool {
        get { _LiveObjects.tracking.load(ordering: .relaxed) }
        set { _LiveObjects.tracking.store(newValue, ordering: .relaxed) }
    }

    /// Subscriptions alive now (counted while tracking is on).
    public static var liveSubscriptions: Int { _LiveObjects.subscriptions.load(ordering: .relaxed) }

    /// C subscriber bags alive now.
    public static var liveBags: Int { Int(csr_debug_live_bags()) }

    /// C entry arrays alive now (current and retired).
    public static var liveBagArrays: Int { Int(csr_debug_live_arrays()) }

    /// Items bags retired and did not hand back yet (they wait for a reader
    /// to leave).
    public static var retiredBagItems: Int { Int(csr_debug_retired_items()) }

    /// Entry arrays bags replaced while a walk was using them and did not
    /// free yet (they wait for that walk to leave; included in
    /// `liveBagArrays`).
    public static var retiredBagArrays: Int { Int(csr_debug_retired_arrays()) }
}

enum _LiveObjects {
    static let tracking = Synchronization.Atomic<Bool>(false)
    static let subscriptions = Synchronization.Atomic<Int>(0)

    /// Counts a new subscription if tracking is on; returns whether it did
    /// (the object remembers, so that only counted objects are uncounted).
    @inline(__always)
    static func subscriptionCreated() -> Bool {
        guard tracking.load(ordering: .relaxed) else { return false }
        subscriptions.add(1, ordering: .relaxed)
        return true
    }

    @inline(__always)
    static func subscriptionDestroyed() {
        subscriptions.subtract(1, ordering: .relaxed)
    }
}
