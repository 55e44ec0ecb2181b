// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Loop.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

var queue: [Int] { [] }
func processNextBatch() -> Signal<Int, NoError> { fatalError() }
