// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import SignalKit
import SignalKitTesting
import Synchronization
import Testing

final class SlotStorage: @unchecked Sendable {
    let raw = UnsafeMutableRawPointer.allocate(byteCount: Int(CSR_SLOT_SIZE), alignment: 8)
    var slot: OpaquePointer { OpaquePointer(raw) }
    init() { csr_slot_init(slot) }
    deinit { raw.deallocate() }
}

private func pointer(_ value: Int) -> UnsafeMutableRawPointer { UnsafeMutableRawPointer(bitPattern: value)! }

extension CSignalRuntimeSuite {
    @Suite struct SlotTests {
        @Test func exchangeHandsBackThePreviousValue() {
            let storage = SlotStorage()
            var refused = true
            #expect(csr_slot_exchange(storage.slot, pointer(0x100), &refused) == nil)
            #expect(!refused)
            #expect(csr_slot_peek(storage.slot) == pointer(0x100))
            #expect(csr_slot_exchange(storage.slot, pointer(0x200), &refused) == pointer(0x100))
            #expect(csr_slot_exchange(storage.slot, nil, &refused) == pointer(0x200))
            #expect(csr_slot_peek(storage.slot) == nil)
        }

        @Test func closeIsTerminalAndRefusesLaterValues() {
            let storage = SlotStorage()
            var refused = false
            _ = csr_slot_exchange(storage.slot, pointer(0x100), &refused)
            var wasClosed = true
            #expect(csr_slot_close(storage.slot, &wasClosed) == pointer(0x100))
            #expect(!wasClosed)
            #expect(csr_slot_is_closed(storage.slot))
            #expect(csr_slot_peek(storage.slot) == nil)
            #expect(csr_slot_close(storage.slot, &wasClosed) == nil)
            #expect(wasClosed)
            #expect(csr_slot_exchange(storage.slot, pointer(0x300), &refused) == nil)
            #expect(refused, "a value offered after close stays with the caller")
            #expect(!csr_slot_compare_exchange(storage.slot, nil, pointer(0x300)))
        }

        @Test func compareExchangeNeedsTheExpectedValue() {
            let storage = SlotStorage()
            #expect(csr_slot_compare_exchange(storage.slot, nil, pointer(0x100)))
            #expect(!csr_slot_compare_exchange(storage.slot, pointer(0x200), pointer(0x300)))
            #expect(csr_slot_compare_exchange(storage.slot, pointer(0x100), pointer(0x300)))
            #expect(csr_slot_peek(storage.slot) == pointer(0x300))
        }

        /// Every value offered is handed back exactly once (by a later exchange,
        /// by the close, or as refused), across racing exchanges and one close.
        @Test func racingExchangesAndCloseAccountForEveryValue() {
            let rounds = 200 * stressScale
            for _ in 0..<rounds {
                let storage = SlotStorage()
                let returned = SignalKit.Atomic<[Int]>(value: [])
                let perThread = 50
                race(threads: 4) { index in
                    if index == 3 {
                        var wasClosed = false
                        if let old = csr_slot_close(storage.slot, &wasClosed) {
                            returned.modify { $0 + [Int(bitPattern: old)] }
                        }
                        return
                    }
                    for step in 0..<perThread {
                        let value = (index * perThread + step + 1) * 16
                        var refused = false
                        let old = csr_slot_exchange(storage.slot, pointer(value), &refused)
                        returned.modify { list in
                            list + (refused ? [value] : []) + (old.map { [Int(bitPattern: $0)] } ?? [])
                        }
                    }
                }
                let values = returned.with { $0 }.sorted()
                #expect(values == (1...(3 * perThread)).map { $0 * 16 })
            }
        }
    }
}
