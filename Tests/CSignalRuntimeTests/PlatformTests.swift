// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import Dispatch
import Testing

extension CSignalRuntimeSuite {
    @Suite struct PlatformTests {
        /// A thread slot is the calling thread's own: another thread
        /// starts with NULL and does not see this thread's value.
        @Test func aThreadSlotIsPerThread() {
            let marker = UnsafeMutableRawPointer(bitPattern: 0x1000)!
            #expect(csr_thread_slot_get(CSR_THREAD_SLOT_INSPECTED_STAGE) == nil)
            csr_thread_slot_set(CSR_THREAD_SLOT_INSPECTED_STAGE, marker)
            #expect(csr_thread_slot_get(CSR_THREAD_SLOT_INSPECTED_STAGE) == marker)
            // `async` (a `sync` block may run on the calling thread).
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var seenElsewhere: UnsafeMutableRawPointer? = marker
            DispatchQueue(label: "csr.platform").async {
                seenElsewhere = csr_thread_slot_get(CSR_THREAD_SLOT_INSPECTED_STAGE)
                csr_thread_slot_set(CSR_THREAD_SLOT_INSPECTED_STAGE, UnsafeMutableRawPointer(bitPattern: 0x2000))
                csr_thread_slot_set(CSR_THREAD_SLOT_INSPECTED_STAGE, nil)
                done.signal()
            }
            done.wait()
            #expect(seenElsewhere == nil)
            #expect(csr_thread_slot_get(CSR_THREAD_SLOT_INSPECTED_STAGE) == marker)
            csr_thread_slot_set(CSR_THREAD_SLOT_INSPECTED_STAGE, nil)
            #expect(csr_thread_slot_get(CSR_THREAD_SLOT_INSPECTED_STAGE) == nil)
        }
    }
}
