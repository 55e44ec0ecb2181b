// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: an emitter hands one fire's arguments to every observer, some on
//   their queues, so argument types must be Sendable.
// expect: type 'Frame' does not conform to the 'Sendable' protocol

import SignalKit

final class Frame {
    var pixels: [UInt8] = []
}

let frames = EventEmitter<Frame>()
