// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Transforming.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Reading { var isValid: Bool; var celsius: Double }
struct User {}
enum NetworkError: Error { case timeout }
var readings: Signal<Reading, NoError> { fatalError() }
var numbers: Signal<Int, NoError> { fatalError() }

struct Request { var user: String; var path: String }
var requests: Signal<Request, NoError> { fatalError() }

// Doc comments of Sources/SignalKit/Operators/Transforming.
var lines: Signal<String, NoError> { fatalError() }
