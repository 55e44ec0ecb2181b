// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// Releases objects from a loop, in constant stack, so that a long chain of
/// objects holding each other (`then` chains, composition records, nested
/// subscriptions) does not release recursively and overflow the stack: the
/// first release on a thread drains a per-thread list; objects released
/// while it drains (by the objects it releases) only append to that list.
enum _IterativeRelease {
    private final class Pending {
        var objects: [AnyObject] = []
    }

    /// Releases `objects` (emptying it): here, from a loop, or, when a loop
    /// runs further up this thread's stack, from that loop.
    static func release(_ objects: inout [AnyObject]) {
        if let draining = _ThreadSlot.releaseList.pointer {
            Unmanaged<Pending>.fromOpaque(draining).takeUnretainedValue().objects.append(contentsOf: objects)
            objects.removeAll()
            return
        }
        let pending = Pending()
        swap(&pending.objects, &objects)
        _ThreadSlot.releaseList.pointer = Unmanaged.passUnretained(pending).toOpaque()
        while let object = pending.objects.popLast() {
            withExtendedLifetime(object) {}  // released here; nested nodes append
        }
        _ThreadSlot.releaseList.pointer = nil
    }
}
