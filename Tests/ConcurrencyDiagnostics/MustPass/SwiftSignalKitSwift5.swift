// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// mode: 5 (warnings allowed, no errors)
// SwiftSignalKit-style code in the Swift 5 language mode: local variables
// captured and mutated in callbacks, non-Sendable classes through operators,
// queues and promises. Changing only the import must keep it compiling.

import SignalKit

final class Peer {
    var name: String
    init(name: String) { self.name = name }
}

final class ChatController {
    var peers: [Peer] = []
    var disposable: Disposable?
    let queue = Queue()

    func load(_ peers: Signal<[Peer], NoError>) {
        var updates = 0
        var lastCount = 0
        let promise = Promise<[Peer]>()
        promise.set(peers)
        let value = ValuePromise<Int>(0)
        disposable =
            (promise.get()
            |> map { peers -> [Peer] in
                updates += 1
                return peers.filter { !$0.name.isEmpty }
            }
            |> deliverOn(Queue.mainQueue())).start(
                next: { [weak self] peers in
                    self?.peers = peers
                    lastCount = peers.count
                    value.set(lastCount)
                },
                completed: {
                    updates = 0
                })
        queue.async {
            updates += 1
        }
        let single = Signal<Peer, NoError>.single(Peer(name: "a"))
        let both = combineLatest(single, Signal<Peer, NoError>.single(Peer(name: "b")))
        _ = both.start(next: { a, b in
            updates += a.name.count + b.name.count
        })
        let disposables = DisposableSet()
        disposables.add(
            ActionDisposable {
                updates = 0
            })
        let emitter = EventEmitter<Peer>()
        emitter.addObserver(self) { controller, peer in
            controller.peers.append(peer)
        }
        emitter.fire(Peer(name: "c"))
        _ = (updates, lastCount)
    }
}
