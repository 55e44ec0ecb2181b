// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: a Promise keeps its value and replays it to subscribers on their
//   threads, so its value type must be Sendable.
// expect: type 'Session' does not conform to the 'Sendable' protocol

import SignalKit

final class Session {
    var token = ""
}

let session = Promise<Session>()
