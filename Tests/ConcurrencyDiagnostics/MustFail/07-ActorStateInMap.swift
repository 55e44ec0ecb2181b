// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: an operator closure runs on whatever thread delivers upstream, not on
//   the actor, so it cannot read actor state synchronously.
// expect: actor-isolated property 'scale' can not be referenced from a Sendable closure

import SignalKit

actor Scaler {
    var scale = 2

    func scaled(_ values: Signal<Int, NoError>) -> Signal<Int, NoError> {
        values |> map { $0 * self.scale }
    }
}
