// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: Signal.single keeps its value and delivers it on every thread that
//   starts the signal, so the value must be Sendable.
// expect: type 'Buffer' does not conform to the 'Sendable' protocol

import SignalKit

final class Buffer {
    var bytes: [UInt8] = []
}

func wrap(_ buffer: Buffer) -> Signal<Buffer, NoError> {
    .single(buffer)
}
