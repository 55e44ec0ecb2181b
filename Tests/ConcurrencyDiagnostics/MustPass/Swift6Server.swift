// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// mode: 6 (no warnings allowed)
// Typical Swift 6 server code: Sendable values, state in actors, atomics and
// mutexes, queues for thread hops. It must compile without a diagnostic.

import SignalKit
import Synchronization

struct Quote: Sendable, Equatable {
    var symbol: String
    var price: Double
}

enum FeedError: Error, Equatable {
    case disconnected
}

actor PriceBook {
    private var latest: [String: Double] = [:]

    func record(_ quote: Quote) {
        latest[quote.symbol] = quote.price
    }

    func price(of symbol: String) -> Double? {
        latest[symbol]
    }
}

final class Feed: Sendable {
    let quotes = ValuePipe<Quote>()
    let status = ValuePromise<Bool>(false, ignoreRepeated: true)
    let lastQuote = Promise<Quote>()
    let received = SignalKit.Atomic<Int>(value: 0)
    let symbols = Mutex<Set<String>>([])
    let events = EventEmitter<String, Double>()

    func publish(_ quote: Quote) {
        lastQuote.set(.single(quote))
        quotes.putNext(quote)
        events.fire(quote.symbol, quote.price)
    }

    func run(into book: PriceBook) -> any Disposable {
        let worker = Queue(name: "feed.worker")
        let handles = DisposableSet()
        let large =
            quotes.signal()
            |> filter { $0.price > 100 }
            |> map { Quote(symbol: $0.symbol.uppercased(), price: $0.price) }
            |> deliverOn(worker)
        handles.add(
            large.start(next: { [received, symbols] quote in
                received.modify { $0 + 1 }
                symbols.withLock { _ = $0.insert(quote.symbol) }
                Task { await book.record(quote) }
            })
        )
        let timed =
            Signal<Quote, FeedError>.single(Quote(symbol: "X", price: 1))
            |> delay(0.01, queue: worker)
            |> timeout(1, queue: worker, alternate: .fail(.disconnected))
        handles.add(timed.start(error: { error in print("feed failed: \(error)") }))
        handles.add(
            combineLatest(status.get(), lastQuote.get()).start(next: { connected, quote in
                if connected { print(quote.symbol) }
            })
        )
        handles.add(
            events.addObserver(book, queue: worker) { book, symbol, price in
                Task { await book.record(Quote(symbol: symbol, price: price)) }
            })
        return handles
    }
}

func firstQuote(_ feed: Feed) async throws -> Quote {
    try await feed.quotes.signal().first()
}

/// The main-actor dashboard of the concurrency article, made right: values
/// are delivered on the main actor, so the callback may write its state.
@MainActor final class Dashboard {
    var lastPrice = 0.0
    var handle: (any Disposable)?

    func attach(_ prices: Signal<Double, NoError>) {
        handle = (prices |> deliverOn(Queue(name: "out"))).start(
            isolation: MainActor.shared,
            next: { price in
                self.lastPrice = price
            })
    }
}

/// The same for an actor of the service's own.
actor Ledger {
    private var total = 0.0
    private var handle: (any Disposable)?

    func attach(_ amounts: Signal<Double, FeedError>) {
        handle = amounts.start(
            isolation: self,
            next: { amount in self.total += amount },
            error: { _ in self.total = 0 },
            completed: { self.handle = nil }
        )
    }
}
