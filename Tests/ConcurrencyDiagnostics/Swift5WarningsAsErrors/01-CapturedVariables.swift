// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// recipe: compiles
// SwiftSignalKit-style code in the Swift 5 mode, built with
// -warnings-as-errors: local variables captured and mutated in the closures
// of operators, start callbacks, queues, timers and disposables; non-Sendable
// classes through deliverOn, promises and generators. The captured-variable
// diagnostics are all in the SendableClosureCaptures group, so the recipe's
// `-Wwarning SendableClosureCaptures` keeps them warnings and the file
// compiles unchanged.

import SignalKit

final class Peer {
    var name: String
    init(name: String) { self.name = name }
}

final class PeerListController {
    var peers: [Peer] = []
    var disposable: Disposable?
    let disposables = DisposableSet()
    let queue = Queue(name: "peers")

    func load(_ peers: Signal<[Peer], NoError>) {
        var updates = 0
        var isFirst = true
        let promise = Promise<[Peer]>()
        promise.set(peers)
        disposable =
            (promise.get()
            |> filter { peers in
                updates += 1
                return !peers.isEmpty
            }
            |> map { peers -> [Peer] in
                peers.filter { !$0.name.isEmpty }
            }
            |> deliverOn(Queue.mainQueue())).start(
                next: { [weak self] peers in
                    if isFirst {
                        isFirst = false
                    }
                    self?.peers = peers
                },
                completed: {
                    updates = 0
                })
        queue.async {
            updates += 1
        }
        Queue.mainQueue().after(1.0) {
            isFirst = true
        }
        let timer = Timer(
            timeout: 5.0, repeat: true,
            completion: { _ in
                updates += 1
            }, queue: queue)
        timer.start()
        disposables.add(
            ActionDisposable {
                timer.invalidate()
                updates = 0
            })
        let pair = combineLatest(Signal<Peer, NoError>.single(Peer(name: "a")), Signal<Peer, NoError>.single(Peer(name: "b")))
        disposables.add(
            pair.start(next: { a, b in
                updates += a.name.count + b.name.count
            }))
        let generated = Signal<Peer, NoError> { subscriber in
            updates += 1
            subscriber.putNext(Peer(name: "c"))
            subscriber.putCompletion()
            return EmptyDisposable
        }
        disposables.add((generated |> deliverOn(queue)).start())
    }
}
