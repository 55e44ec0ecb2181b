// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Combine.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Replica { func status() -> Signal<Bool, NoError> { fatalError() } }
let username = ValuePromise("")
let isBusy = ValuePromise(false)
let replicas: [Replica] = []
