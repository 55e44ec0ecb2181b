// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct AtomicTests {
    @Test func withModifyAndSwap() {
        let atomic = Atomic(value: 1)
        #expect(atomic.with { $0 * 10 } == 10)
        #expect(atomic.modify { $0 + 1 } == 2)
        #expect(atomic.swap(5) == 2)
        #expect(atomic.with { $0 } == 5)
    }

    @Test func tryWithThrowsWhenTheLockIsHeldEvenByTheCaller() throws {
        let atomic = Atomic(value: 1)
        #expect(try atomic.tryWith { $0 } == 1)
        let nested: Bool = atomic.with { _ in
            do {
                _ = try atomic.tryWith { $0 }
                return false
            } catch AtomicLockError.isLocked {
                return true
            } catch {
                return false
            }
        }
        #expect(nested)
    }

    @Test func replacedValuesAreReleasedAfterUnlockingSoTheirDeinitMayUseTheAtomic() {
        let atomic = Atomic<Probe?>(value: nil)
        let reentered = Shared(false)
        atomic.modify { _ in
            Probe("first") { _ in
                reentered.value = (try? atomic.tryWith { _ in true }) ?? false
            }
        }
        atomic.modify { _ in nil }
        #expect(reentered.value, "the deinit ran after the lock was released")
        _ = atomic.swap(Probe("second") { _ in reentered.value = (try? atomic.tryWith { _ in true }) ?? false })
        reentered.value = false
        _ = atomic.swap(nil)
        #expect(reentered.value)
    }

    @Test func concurrentModificationsAreNotLost() {
        let atomic = Atomic(value: 0)
        race(threads: 4) { _ in
            for _ in 0..<10_000 { atomic.modify { $0 + 1 } }
        }
        #expect(atomic.with { $0 } == 40_000)
    }

    @Test func lockRunsAndRethrows() {
        struct Failure: Error {}
        let lock = Lock()
        let value = Shared(0)
        lock.locked { value.value += 1 }
        #expect(throws: Failure.self) { try lock.throwingLocked { throw Failure() } }
        lock.locked { value.value += 1 }
        #expect(value.value == 2, "the lock was released after the throw")
    }
}
