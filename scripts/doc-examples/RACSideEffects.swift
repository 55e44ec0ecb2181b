// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'RACSideEffects.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

var signal: Signal<Int, NoError> { fatalError() }
