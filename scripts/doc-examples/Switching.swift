// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Switching.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct File {}
struct Document {}
struct Status {}
struct Clock { var now: Double }
let clock = Clock(now: 0)
let query = ValuePromise("")
var files: Signal<File, NoError> { fatalError() }
var edits: Signal<Document, NoError> { fatalError() }
var work: Signal<Int, any Error> { fatalError() }
func search(_ text: String) -> Signal<[String], NoError> { fatalError() }
func upload(_ file: File) -> Signal<Double, NoError> { fatalError() }
func save(_ document: Document) -> Signal<Void, NoError> { fatalError() }
func login() -> Signal<Never, NoError> { fatalError() }
func loadSettings() -> Signal<Never, NoError> { fatalError() }
func connect() -> Signal<Never, NoError> { fatalError() }
func fetchStatus() -> Signal<Status, NoError> { fatalError() }
func loadFeed() -> Signal<[String], NoError> { fatalError() }

enum Tab: Hashable { case home, search }
var letters: Signal<String, NoError> { fatalError() }
var numbers: Signal<String, NoError> { fatalError() }
var sensor: Signal<Double, NoError> { fatalError() }
var everySecond: Signal<Void, NoError> { fatalError() }
var tab: Signal<Tab, NoError> { fatalError() }
var homeFeed: Signal<String, NoError> { fatalError() }
var results: Signal<String, NoError> { fatalError() }
var isLoggedIn: Signal<Bool, NoError> { fatalError() }
var userName: Signal<String, NoError> { fatalError() }
