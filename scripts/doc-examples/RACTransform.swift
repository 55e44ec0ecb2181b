// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'RACTransform.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Request { var user: String; var path: String }
var requests: Signal<Request, NoError> { fatalError() }
