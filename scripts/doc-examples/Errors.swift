// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'Errors.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct Profile {}
struct Status {}
struct Response {}
enum CacheError: Error { case missing }
enum NetworkError: Error { case timeout }
struct ConnectionError: Error { var isTransient: Bool }
struct AppError: Error { init(_ error: ConnectionError) {} }
let id = 1
var queue: Queue { fatalError() }
func fetchProfile(_ id: Int) -> Signal<Profile, NetworkError> { fatalError() }
func cachedProfile(_ id: Int) -> Signal<Profile, CacheError> { fatalError() }
func fetchStatus() -> Signal<Status, NoError> { fatalError() }
func connection() -> Signal<Event, ConnectionError> { fatalError() }
func request() -> Signal<Response, RequestError> { fatalError() }

struct ParseError: Error {}
struct Event: Decodable {}
enum RequestError: Error {
    case decoding(any Error)
    var isTransient: Bool { false }
}
struct Decoder { func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T { fatalError() } }
let decoder = Decoder()
var lines: Signal<String, ParseError> { fatalError() }
var payloads: Signal<[UInt8], RequestError> { fatalError() }
func parse(_ line: String) throws(ParseError) -> Int { fatalError() }
