// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Dispatching.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Profile {}
final class Database: Sendable { func migrate() {} }
let id = 1
var uiQueue: Queue { fatalError() }
var ioQueue: Queue { fatalError() }
func loadProfile(_ id: Int) -> Signal<Profile, NoError> { fatalError() }
func openDatabase() -> Signal<Database, NoError> { fatalError() }
func render(_ profile: Profile) {}
