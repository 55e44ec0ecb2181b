// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Combining.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Replica { func status() -> Signal<Bool, NoError> { fatalError() } }
let username = ValuePromise("")
let isBusy = ValuePromise(false)
let replicas: [Replica] = []

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
