// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: deliverOn hands each value to another thread, so values must be
//   Sendable.
// expect: type 'Document' does not conform to the 'Sendable' protocol

import SignalKit

final class Document {
    var text = ""
}

func show(_ documents: Signal<Document, NoError>) -> Signal<Document, NoError> {
    documents |> deliverOn(Queue(name: "render"))
}
