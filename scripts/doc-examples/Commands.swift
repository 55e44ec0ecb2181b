// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Commands.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Document {}
struct Revision {}
enum SaveError: Error { case diskFull }
struct Storage { func save(_ document: Document) -> Signal<Revision, SaveError> { fatalError() } }
let storage = Storage()
let document = Document()
let other = Document()
var command: Command<Document, Revision, SaveError> { fatalError() }
var uiQueue: Queue { fatalError() }
func showSpinner(_ visible: Bool) {}
func report(_ error: SaveError) {}
func nextInput() -> Document { Document() }

// Doc comments of Sources/SignalKit/Commands.
struct Credentials: Sendable {}
struct Session: Sendable {}
enum LoginError: Error { case denied }
struct API: Sendable { func logIn(_ credentials: Credentials) -> Signal<Session, LoginError> { fatalError() } }
let api = API()
let credentials = Credentials()
func report(_ error: LoginError) {}
func open(_ session: Session) {}
