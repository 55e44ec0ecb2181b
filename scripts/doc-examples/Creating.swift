// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Creating.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

enum NetworkError: Error { case timeout }

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

struct Config {}
struct ConfigError: Error {}
func loadConfig() throws(ConfigError) -> Config { Config() }
