// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'BackPressure.md' (and the doc comments of the
// Boundaries room) use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Quote: Sendable {}
var quotes: Signal<Quote, NoError> { fatalError() }
var clientQueue: Queue { fatalError() }
enum FeedError: Error { case tooSlow }
