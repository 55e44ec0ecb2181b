// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import SignalKitTesting
import Testing

@Suite struct ActionDisposableTests {
    @Test func runsTheActionOnceOnTheFirstDispose() {
        let count = Shared(0)
        let disposable = ActionDisposable { count.value += 1 }
        disposable.dispose()
        disposable.dispose()
        #expect(count.value == 1)
    }

    @Test func releasingWithoutDisposingDoesNotRunTheAction() {
        let ran = Shared(false)
        let probe = WeakBox<Probe>(nil)
        do {
            let object = Probe()
            probe.value = object
            _ = ActionDisposable {
                object.touch()
                ran.value = true
            }
        }
        #expect(!ran.value)
        #expect(probe.value == nil, "the action is released without running")
    }

    @Test func theActionIsReleasedAfterRunning() {
        let probe = WeakBox<Probe>(nil)
        let disposable: ActionDisposable
        do {
            let object = Probe()
            probe.value = object
            disposable = ActionDisposable { object.touch() }
        }
        disposable.dispose()
        #expect(probe.value == nil)
    }

    @Test func concurrentDisposalsRunTheActionExactlyOnce() {
        for _ in 0..<200 {
            let counter = CountingDisposable()
            let disposable = ActionDisposable { counter.dispose() }
            race(threads: 8) { _ in disposable.dispose() }
            #expect(counter.disposeCount == 1)
        }
    }

    @Test func emptyDisposableIsOneSharedNoOp() {
        EmptyDisposable.dispose()
        #expect(EmptyDisposable === EmptyDisposable)
    }
}
