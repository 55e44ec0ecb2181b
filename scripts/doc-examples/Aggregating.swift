// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Aggregating.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

var numbers: Signal<Int, NoError> { fatalError() }
var amounts: Signal<Int, NoError> { fatalError() }
func convertedToCents(_ amount: Int) -> Signal<Int, NoError> { fatalError() }
