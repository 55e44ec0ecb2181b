// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import SignalKit
import Testing

private enum Feed: Error, Equatable {
    case tooSlow
}

@Suite struct SignalBufferTests {
    @Test func eachPolicyReportsItsOverflowAndLimit() {
        #expect(SignalBuffer<Feed>.unbounded.overflow == .never)
        #expect(SignalBuffer<Feed>.unbounded.limit == nil)
        #expect(SignalBuffer<Feed>.droppingOldest(beyond: 3).overflow == .dropOldest)
        #expect(SignalBuffer<Feed>.latest.overflow == .dropOldest)
        #expect(SignalBuffer<Feed>.latest.limit == 1)
        #expect(SignalBuffer<Feed>.droppingNewest(beyond: 3).overflow == .dropNewest)
        #expect(SignalBuffer<Feed>.failing(beyond: 3, with: .tooSlow).overflow == .fail)
        #expect(SignalBuffer<Feed>.blocking(beyond: 4).overflow == .block)
        #expect(SignalBuffer<Feed>.blocking(beyond: 4).limit == 4)
    }

    @Test func onlyTheFailingPolicyHasAnError() {
        #expect(SignalBuffer<Feed>.failing(beyond: 3, with: .tooSlow).errorOnOverflow == .tooSlow)
        #expect(
            SignalBuffer<Feed>.failing(beyond: 3, with: .tooSlow).counted(by: SignalBufferProbe()).errorOnOverflow == .tooSlow)
        #expect(SignalBuffer<Feed>.droppingOldest(beyond: 3).errorOnOverflow == nil)
        #expect(SignalBuffer<Feed>.blocking(beyond: 3).errorOnOverflow == nil)
        #expect(SignalBuffer<Feed>.unbounded.errorOnOverflow == nil)
    }
}
