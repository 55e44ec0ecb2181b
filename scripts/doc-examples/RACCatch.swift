// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//
// Declarations the examples of 'RACCatch.md' use without declaring them: stubs that
// scripts/check-doc-examples compiles with the document's ```swift blocks.

import SignalKit

struct ParseError: Error {}
struct Event: Decodable {}
enum RequestError: Error { case decoding(any Error) }
struct Decoder { func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T { fatalError() } }
let decoder = Decoder()
var lines: Signal<String, ParseError> { fatalError() }
var payloads: Signal<[UInt8], RequestError> { fatalError() }
func parse(_ line: String) throws(ParseError) -> Int { fatalError() }
