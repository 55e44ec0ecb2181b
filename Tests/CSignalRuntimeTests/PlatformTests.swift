// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import CSignalRuntime
import Dispatch
import Testing

extension CSignalRuntimeSuite {
    @Suite struct PlatformTests {
        /// The inspection slot is the calling thread's own: another thread
        /// starts with NULL and does not see this thread's value.
        @Test func theInspectionSlotIsPerThread() {
            let marker = UnsafeMutableRawPointer(bitPattern: 0x1000)!
            #expect(csr_inspection_current() == nil)
            csr_inspection_set_current(marker)
            #expect(csr_inspection_current() == marker)
            // `async` (a `sync` block may run on the calling thread).
            let done = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var seenElsewhere: UnsafeMutableRawPointer? = marker
            DispatchQueue(label: "csr.platform").async {
                seenElsewhere = csr_inspection_current()
                csr_inspection_set_current(UnsafeMutableRawPointer(bitPattern: 0x2000))
                csr_inspection_set_current(nil)
                done.signal()
            }
            done.wait()
            #expect(seenElsewhere == nil)
            #expect(csr_inspection_current() == marker)
            csr_inspection_set_current(nil)
            #expect(csr_inspection_current() == nil)
        }
    }
}
