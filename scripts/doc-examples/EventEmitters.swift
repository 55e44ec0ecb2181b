// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'EventEmitters.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct NetworkError: Error { let code: Int }

final class NetworkRequest {
    let onNetworkResult = EventEmitter<[UInt8]?, NetworkError?>()
}

final class Observer: Sendable {
    func handle(_ value: Int) {}
    func render(_ state: String) {}
}

var request: NetworkRequest { NetworkRequest() }
let emitter = EventEmitter<Int>()
let states = EventEmitter<String>()
var observer: Observer { Observer() }
var queue: Queue { fatalError() }
