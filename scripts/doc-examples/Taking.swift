// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Taking.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

var source: Signal<Int, NoError> { fatalError() }
var progress: Signal<Double, NoError> { fatalError() }

var events: Signal<String, NoError> { fatalError() }
var logout: Signal<Void, NoError> { fatalError() }
