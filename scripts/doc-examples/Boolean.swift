// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Boolean.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

var nameValid: Signal<Bool, NoError> { fatalError() }
var passwordValid: Signal<Bool, NoError> { fatalError() }
