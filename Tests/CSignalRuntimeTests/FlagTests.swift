// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import SignalKitTesting
import Synchronization
import Testing

/// A flag in heap storage owned by the test (C never owns flag memory).
final class FlagStorage: @unchecked Sendable {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: Int(CSR_FLAG_SIZE), alignment: 8)
    var flag: OpaquePointer { OpaquePointer(raw) }
    init() { csr_flag_init(flag) }
    deinit { raw.deallocate() }
}

extension CSignalRuntimeSuite {
    @Suite struct FlagTests {
        @Test func sizeMatchesTheCompileTimeConstant() {
            #expect(csr_flag_size() == Int(CSR_FLAG_SIZE))
            #expect(csr_slot_size() == Int(CSR_SLOT_SIZE))
        }

        @Test func terminalTransitionHappensOnce() {
            let storage = FlagStorage()
            #expect(!csr_flag_is_terminated(storage.flag))
            #expect(csr_flag_terminate(storage.flag))
            #expect(csr_flag_is_terminated(storage.flag))
            #expect(!csr_flag_terminate(storage.flag))
            #expect(csr_flag_load(storage.flag) & UInt(CSR_FLAG_TERMINATED) != 0)
        }

        @Test func userBitsAreIndependentOfTermination() {
            let storage = FlagStorage()
            #expect(csr_flag_set_bits(storage.flag, UInt(CSR_FLAG_USER0)) == 0)
            #expect(csr_flag_set_bits(storage.flag, UInt(CSR_FLAG_USER1)) == UInt(CSR_FLAG_USER0))
            #expect(!csr_flag_is_terminated(storage.flag))
            #expect(csr_flag_clear_bits(storage.flag, UInt(CSR_FLAG_USER0)) == UInt(CSR_FLAG_USER0 | CSR_FLAG_USER1))
            #expect(csr_flag_load(storage.flag) == UInt(CSR_FLAG_USER1))
        }

        @Test func readerGuardDefersTheReleaseToTheLastReader() {
            let storage = FlagStorage()
            let outer = csr_flag_enter(storage.flag)
            #expect(outer == CSR_ENTER_FAST)
            let inner = csr_flag_enter(storage.flag)
            #expect(inner == CSR_ENTER_SLOW)
            #expect(csr_flag_terminate(storage.flag))
            // Readers are inside: the terminator may not release.
            #expect(!csr_flag_claim_release(storage.flag))
            // The inner reader leaves first: the outer one is still inside.
            #expect(!csr_flag_exit(storage.flag, inner))
            // The last reader out owns the release, exactly once.
            #expect(csr_flag_exit(storage.flag, outer))
            #expect(!csr_flag_claim_release(storage.flag))
            #expect(!csr_flag_claim_release_unguarded(storage.flag))
            #expect(csr_flag_enter(storage.flag) == CSR_ENTER_TERMINATED)
        }

        @Test func terminatorReleasesWhenNoReaderIsInside() {
            let storage = FlagStorage()
            let ticket = csr_flag_enter(storage.flag)
            #expect(!csr_flag_exit(storage.flag, ticket))
            #expect(!csr_flag_claim_release(storage.flag), "not terminated yet: nothing to release")
            #expect(csr_flag_terminate(storage.flag))
            #expect(csr_flag_claim_release(storage.flag))
            #expect(!csr_flag_claim_release(storage.flag))
        }

        /// A fast reader is inside on this thread: a terminator on another
        /// thread sees it (after the heavy barrier, or the reader's fence) and
        /// must not be granted the release; the reader's exit is.
        @Test func foreignTerminatorLeavesTheReleaseToTheReaderInside() {
            let storage = FlagStorage()
            let ticket = csr_flag_enter(storage.flag)
            #expect(ticket == CSR_ENTER_FAST)
            let claimed = Synchronization.Atomic<Int>(-1)
            race(threads: 1) { _ in
                #expect(csr_flag_terminate(storage.flag))
                claimed.store(csr_flag_claim_release(storage.flag) ? 1 : 0, ordering: .releasing)
            }
            #expect(claimed.load(ordering: .acquiring) == 0)
            #expect(csr_flag_exit(storage.flag, ticket))
            #expect(!csr_flag_claim_release_unguarded(storage.flag))
        }

        /// Readers came and went on this thread: a terminator on another
        /// thread is granted the release, and the next entry finds the flag
        /// terminated.
        @Test func foreignTerminatorReleasesWhenNoReaderIsInside() {
            let storage = FlagStorage()
            for _ in 0..<3 {
                let ticket = csr_flag_enter(storage.flag)
                #expect(ticket == CSR_ENTER_FAST)
                #expect(!csr_flag_exit(storage.flag, ticket))
            }
            let claimed = Synchronization.Atomic<Int>(-1)
            race(threads: 1) { _ in
                #expect(csr_flag_terminate(storage.flag))
                claimed.store(csr_flag_claim_release(storage.flag) ? 1 : 0, ordering: .releasing)
            }
            #expect(claimed.load(ordering: .acquiring) == 1)
            #expect(csr_flag_enter(storage.flag) == CSR_ENTER_TERMINATED)
            #expect(!csr_flag_claim_release_unguarded(storage.flag))
        }

        @Test func unguardedClaimIsGrantedOnce() {
            let storage = FlagStorage()
            #expect(csr_flag_terminate(storage.flag))
            #expect(csr_flag_claim_release_unguarded(storage.flag))
            #expect(!csr_flag_claim_release_unguarded(storage.flag))
            #expect(!csr_flag_claim_release(storage.flag))
        }

        @Test func spinlockExcludes() {
            let storage = FlagStorage()
            let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
            counter.initialize(to: 0)
            defer { counter.deallocate() }
            let box = UncheckedBox(counter)
            let perThread = 20_000 * stressScale
            race(threads: 4) { _ in
                for _ in 0..<perThread {
                    csr_flag_lock(storage.flag)
                    box.value.pointee += 1
                    csr_flag_unlock(storage.flag)
                }
            }
            #expect(counter.pointee == 4 * perThread)
        }

        /// Racing terminators and readers: exactly one terminator wins, exactly
        /// one party is granted the release, never while a reader is inside.
        @Test func racingReadersAndTerminatorsClaimOnce() {
            raceRounds(
                threads: 3,
                rounds: 20_000 * stressScale,
                setup: { _ in RoundCounters() },
                body: { index, round in
                    let flag = round.storage.flag
                    if index == 0 {
                        if csr_flag_terminate(flag) { round.winners.add(1, ordering: .relaxed) }
                        if csr_flag_claim_release(flag) {
                            if round.inside.load(ordering: .acquiring) != 0 { round.violations.add(1, ordering: .relaxed) }
                            round.releases.add(1, ordering: .relaxed)
                        }
                    } else {
                        for _ in 0..<4 {
                            let ticket = csr_flag_enter(flag)
                            if ticket == CSR_ENTER_FAST || ticket == CSR_ENTER_SLOW {
                                round.inside.add(1, ordering: .acquiringAndReleasing)
                                round.inside.subtract(1, ordering: .acquiringAndReleasing)
                                if csr_flag_exit(flag, ticket) { round.releases.add(1, ordering: .relaxed) }
                            } else if ticket == CSR_ENTER_TERMINATED_RELEASE {
                                round.releases.add(1, ordering: .relaxed)
                            }
                        }
                    }
                },
                check: { round in
                    #expect(round.winners.load(ordering: .relaxed) == 1)
                    #expect(round.violations.load(ordering: .relaxed) == 0)
                    // The terminator and the readers never both miss the
                    // claim (the heavy barrier, or a fence where it is
                    // unavailable), so the owner's teardown finds it taken.
                    #expect(round.releases.load(ordering: .relaxed) == 1)
                    #expect(!csr_flag_claim_release_unguarded(round.storage.flag))
                }
            )
        }
    }
}

final class RoundCounters: Sendable {
    let storage = FlagStorage()
    let winners = Synchronization.Atomic<Int>(0)
    let releases = Synchronization.Atomic<Int>(0)
    let inside = Synchronization.Atomic<Int>(0)
    let violations = Synchronization.Atomic<Int>(0)
}

/// Moves a pointer into a `@Sendable` closure (tests only).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
