// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: combineLatest keeps each input's latest value and delivers it on the
//   thread of another input, so element types must be Sendable.
// expect: type 'Cursor' does not conform to the 'Sendable' protocol

import SignalKit

final class Cursor {
    var position = 0
}

func pair(_ a: Signal<Cursor, NoError>, _ b: Signal<Int, NoError>) -> Signal<(Cursor, Int), NoError> {
    combineLatest(a, b)
}
