// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: a start callback runs on the thread that delivers (here the "out"
//   queue), so it cannot touch main-actor state.
// expect: main actor-isolated property 'lastPrice' can not be mutated from a Sendable closure

import SignalKit

@MainActor final class Dashboard {
    var lastPrice = 0.0
    var handle: (any Disposable)?

    func attach(_ prices: Signal<Double, NoError>) {
        handle = (prices |> deliverOn(Queue(name: "out"))).start(next: { price in
            self.lastPrice = price
        })
    }
}
