// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// recipe: compiles
// 02-ForwardedClosures.swift with the code changes the recipe leaves to a
// Swift 5 client built with -warnings-as-errors, site by site:
// * a closure parameter handed on: mark it `@Sendable` (what the Swift 6 mode
//   requires too; its callers' closures then capture under the recipe), or
//   hand on a closure literal that calls it (`{ f($0) }`: the Swift 5 mode
//   does not check what a closure literal captures; the Swift 6 mode does);
// * a stored closure or a method reference: a closure literal that calls it;
// * a local function: `@Sendable func`;
// * a Disposable's mutable state: an Atomic (or a lock).
// What remains is in the SendableClosureCaptures group.

import SignalKit

func mapped(_ signal: Signal<Int, NoError>, _ f: @escaping @Sendable (Int) -> Int) -> Signal<Int, NoError> {
    return signal |> map(f)
}

func offset(_ signal: Signal<Int, NoError>) -> Signal<Int, NoError> {
    var calls = 0
    return mapped(
        signal,
        { value in
            calls += 1
            return value + calls
        })
}

func observe(_ signal: Signal<Int, NoError>, next: @escaping (Int) -> Void, completion: (() -> Void)?) -> Disposable {
    return signal.start(next: { next($0) }, completed: { completion?() })
}

func later(_ queue: Queue, _ f: @escaping () -> Void) -> Disposable {
    queue.async { f() }
    return ActionDisposable(action: { f() })
}

final class Counter {
    var total = 0
    var onChange: ((Int) -> Void)?

    func add(_ value: Int) {
        total += value
    }

    func bind(_ values: Signal<Int, NoError>) -> Disposable {
        var seen = 0
        @Sendable func record(_ value: Int) {
            seen += value
        }
        let disposables = DisposableSet()
        disposables.add(values.start(next: { [weak self] in self?.add($0) }))
        disposables.add(values.start(next: { [weak self] in self?.onChange?($0) }))
        disposables.add(values.start(next: { value in record(value) }))
        return disposables
    }
}

final class FileHandleDisposable: Disposable {
    let closed = Atomic<Bool>(value: false)

    func dispose() {
        _ = closed.swap(true)
    }
}
