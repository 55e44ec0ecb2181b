// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// rule: an observer's callback receives its owner on the firing thread or
//   its queue, so the owner must be Sendable (an actor-isolated or
//   thread-safe object).
// expect: type 'Screen' does not conform to the 'Sendable' protocol

import SignalKit

final class Screen {
    var title = ""
}

func observe(_ titles: EventEmitter<String>, on screen: Screen) {
    titles.addObserver(screen) { screen, title in screen.title = title }
}
