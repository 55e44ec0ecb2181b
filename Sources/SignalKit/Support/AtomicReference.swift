// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Synchronization

/// An atomic strong reference: lock-free `load` (returns a strong reference)
/// and `store`, for fields read on hot paths and replaced concurrently (an
/// emitter's last data, an observer's queue).
///
/// A reader cannot simply load the pointer and retain it: a concurrent
/// `store` may release the object in between. So readers announce themselves
/// in `readers` around the load-and-retain (a few instructions, no user
/// code), and a writer releases the object it replaced only when no reader
/// is inside; otherwise it retires the object to a list that the next writer
/// or the last reader to leave releases. Why that is safe (every operation on
/// `current` and `readers` is sequentially consistent):
///
/// * a reader that got the old object loaded it before the writer's
///   exchange, and had incremented `readers` before that;
/// * so a writer (or reclaimer) that reads `readers == 0` after the exchange
///   knows that reader has already retained and left; a reader arriving
///   later can only load the new object.
///
/// The retired list is taken *before* `readers` is checked, so it only holds
/// objects exchanged out before the check. Readers that overlap without end
/// delay reclamation (the list grows until a moment without readers); the
/// objects are released at the latest when the reference is destroyed.
///
/// Released objects may run user code in `deinit`: it happens on the
/// releasing thread, with no lock held.
struct _AtomicReference<Object: AnyObject>: ~Copyable, @unchecked Sendable {
    // `@unchecked Sendable`: all state is in atomics; retired nodes are owned
    // by whichever thread took them off the list.
    private let current: Synchronization.Atomic<Unmanaged<Object>?>
    private let readers = Synchronization.Atomic<Int>(0)
    private let retired = Synchronization.Atomic<Unmanaged<_RetiredObject>?>(nil)

    init(_ object: Object? = nil) {
        current = Synchronization.Atomic(object.map { Unmanaged.passRetained($0) })
    }

    deinit {
        // No reader or writer can be running: the owner is being destroyed.
        current.load(ordering: .acquiring)?.release()
        _RetiredObject.releaseChain(retired.load(ordering: .acquiring))
    }

    /// Whether the reference is nil right now (no reader protocol: the
    /// object is not touched).
    var isNil: Bool {
        current.load(ordering: .acquiring) == nil
    }

    /// A strong reference to the current object, or nil.
    func load() -> Object? {
        // Nil needs no protection: nothing is dereferenced.
        guard current.load(ordering: .acquiring) != nil else { return nil }
        readers.add(1, ordering: .sequentiallyConsistent)
        // An explicit retain, before leaving: after `readers` drops, a writer
        // may release the reference the slot held.
        let retained = current.load(ordering: .sequentiallyConsistent)?.retain()
        if readers.subtract(1, ordering: .sequentiallyConsistent).newValue == 0 {
            reclaim()
        }
        return retained?.takeRetainedValue()
    }

    /// Replaces the object. The previous one is released now if no reader is
    /// inside, else by the next reclamation.
    func store(_ object: consuming Object?) {
        let desired = object.take().map { Unmanaged.passRetained($0) }
        guard let previous = current.exchange(desired, ordering: .sequentiallyConsistent) else { return }
        if readers.load(ordering: .sequentiallyConsistent) == 0 {
            previous.release()
            if retired.load(ordering: .acquiring) != nil { reclaim() }
        } else {
            push(_RetiredObject(previous.takeRetainedValue()), last: nil)
            // The reader may have left in between without seeing the node.
            if readers.load(ordering: .sequentiallyConsistent) == 0 { reclaim() }
        }
    }

    /// Releases the retired objects if no reader is inside, else puts them
    /// back.
    private func reclaim() {
        guard let chain = retired.exchange(nil, ordering: .sequentiallyConsistent) else { return }
        if readers.load(ordering: .sequentiallyConsistent) == 0 {
            _RetiredObject.releaseChain(chain)
        } else {
            var last = chain.takeUnretainedValue()
            while let next = last.next { last = next.takeUnretainedValue() }
            push(chain.takeRetainedValue(), last: last)
        }
    }

    /// Pushes a chain (`first` ... `last`, `last` nil for a single node) on
    /// the retired list. The caller owns the chain until the push succeeds.
    private func push(_ first: _RetiredObject, last: _RetiredObject?) {
        let tail = last ?? first
        let node = Unmanaged.passRetained(first)
        var head = retired.load(ordering: .acquiring)
        while true {
            tail.next = head
            let (exchanged, original) = retired.compareExchange(
                expected: head,
                desired: node,
                ordering: .acquiringAndReleasing
            )
            if exchanged { return }
            head = original
        }
    }
}

/// A node of `_AtomicReference`'s retired list: holds one replaced object.
/// `next` is written only by the thread that owns the node (before it is
/// published with a release compare-and-swap).
final class _RetiredObject: @unchecked Sendable {
    let object: AnyObject
    var next: Unmanaged<_RetiredObject>?

    init(_ object: AnyObject) {
        self.object = object
    }

    /// Releases a chain iteratively (no recursion on long chains).
    static func releaseChain(_ head: Unmanaged<_RetiredObject>?) {
        var node = head
        while let current = node {
            node = current.takeUnretainedValue().next
            current.release()
        }
    }
}
