// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Looping.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Profile {}
struct Status {}
struct Event {}
struct Response {}
enum CacheError: Error { case missing }
enum NetworkError: Error { case timeout }
struct ConnectionError: Error { var isTransient: Bool }
struct AppError: Error { init(_ error: ConnectionError) {} }
struct RequestError: Error { var isTransient: Bool }
let id = 1
var queue: Queue { fatalError() }
func fetchProfile(_ id: Int) -> Signal<Profile, NetworkError> { fatalError() }
func cachedProfile(_ id: Int) -> Signal<Profile, CacheError> { fatalError() }
func fetchStatus() -> Signal<Status, NoError> { fatalError() }
func connection() -> Signal<Event, ConnectionError> { fatalError() }
func request() -> Signal<Response, RequestError> { fatalError() }

// feedbackLoop's example drains a work list called `queue`; the restart examples
// use `queue` as a Queue.
extension Queue { var isEmpty: Bool { true } }
func processNextBatch() -> Signal<Int, NoError> { fatalError() }
