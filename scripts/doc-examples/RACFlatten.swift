// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'RACFlatten.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Database { func saveEntries(for letter: String) -> Signal<Int, NoError> { fatalError() } }
let database = Database()
var letters: Signal<String, NoError> { fatalError() }
var numbers: Signal<String, NoError> { fatalError() }
var signalOfSignals: Signal<Signal<String, NoError>, NoError> { fatalError() }
