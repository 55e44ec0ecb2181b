// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Multicasting.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Profile: Sendable {}
let id = 1
var ticker: Signal<Int, NoError> { fatalError() }
func fetchProfile(_ id: Int) -> Signal<Profile, NoError> { fatalError() }
func render(_ profile: Profile) {}
func cache(_ profile: Profile) {}
func show(_ tick: Int) {}

// Doc comments of Sources/SignalKit/Multicasting.
struct Config: Sendable {}
enum LoadError: Error { case unreadable }
var ioQueue: Queue { fatalError() }
func fetchConfig() -> Signal<Config, LoadError> { fatalError() }
func loadConfig(_ completion: @escaping @Sendable (Result<Config, LoadError>) -> Void) {}
