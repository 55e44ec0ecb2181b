// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Events.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

enum NetworkError: Error { case timeout }
var request: Signal<String, NetworkError> { fatalError() }
var events: Signal<SignalEvent<String, NetworkError>, NoError> { fatalError() }
