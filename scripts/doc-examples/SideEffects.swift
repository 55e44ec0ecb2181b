// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'SideEffects.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

final class Stopwatch: Sendable { func report(_ event: String) {} }
var request: Signal<Int, NoError> { fatalError() }

var signal: Signal<Int, NoError> { fatalError() }
