// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Debugging.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Session {}
enum NetworkError: Error { case timeout }
struct Logger: Sendable { func debug(_ message: String) {} }
let logger = Logger()
var username: Signal<String, NoError> { fatalError() }
var request: Signal<Session, NetworkError> { fatalError() }
var signal: Signal<Int, NoError> { fatalError() }
