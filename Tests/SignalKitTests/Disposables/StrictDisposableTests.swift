// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Synchronization
import Testing

@Suite(.serialized) struct StrictDisposableTests {
    @Test func forwardsEveryDispose() {
        let counter = CountingDisposable()
        let strict = StrictDisposable(counter, file: "f.swift", line: 1)
        strict.dispose()
        strict.dispose()
        #expect(counter.disposeCount == 2)
    }

    @Test func strictWrapsAndKeepsTheInnerAlive() {
        let probe = WeakBox<Probe>(nil)
        let strict: any Disposable
        do {
            let object = Probe()
            probe.value = object
            strict = ActionDisposable { object.touch() }.strict()
        }
        #expect(strict is StrictDisposable)
        #expect(probe.value != nil)
        strict.dispose()
    }

    #if DEBUG
    @Test func reportsTheCreationSiteWhenReleasedUndisposed() {
        let reports = _LockedState<[String]>([])
        StrictDisposable.leakHandler = { message in reports.withLock { $0.append(message) } }
        defer { StrictDisposable.leakHandler = nil }
        do {
            _ = StrictDisposable(EmptyDisposable, file: "Leaky.swift", line: 42)
        }
        do {
            let disposed = StrictDisposable(EmptyDisposable, file: "Fine.swift", line: 7)
            disposed.dispose()
        }
        let messages = reports.withLock { $0 }
        #expect(messages.count == 1)
        #expect(messages.first?.contains("Leaky.swift:42") == true)
    }
    #endif
}
