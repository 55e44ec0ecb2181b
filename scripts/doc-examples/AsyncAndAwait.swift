// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'AsyncAndAwait.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit
import SignalKitTesting

/// The testing helper the last example imports from SignalKitTesting.
typealias SubscriptionProbe = SignalKitTesting.SubscriptionProbe

// Doc comments of Sources/SignalKit/Async.
struct Page: Sendable { var next: String? }
enum FetchError: Error { case unavailable }
var ticks: Signal<Int, NoError> { fatalError() }
func fetchPage(after cursor: String?) async throws(FetchError) -> Page { fatalError() }
