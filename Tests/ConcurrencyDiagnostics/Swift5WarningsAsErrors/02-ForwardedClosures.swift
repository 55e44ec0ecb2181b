// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
// recipe: fails; these diagnostics belong to no diagnostic group, so no
//   `-Wwarning` flag reaches them and each site needs the code change shown
//   at the same place in 03-ForwardedClosuresChanged.swift.
// expect: passing_noattrfunc_to_attrfunc
// expect: converting_noattrfunc_to_type
// expect: local_function_executed_concurrently
// expect: concurrent_value_class_mutable_property
// SwiftSignalKit-style code in the Swift 5 mode, built with
// -warnings-as-errors: a function value that is not `@Sendable` (a closure
// parameter, a stored closure, a method reference, a local function) handed
// to a SignalKit closure that may run on another thread, and a Disposable
// with unguarded mutable state.

import SignalKit

func mapped(_ signal: Signal<Int, NoError>, _ f: @escaping (Int) -> Int) -> Signal<Int, NoError> {
    return signal |> map(f)
}

func observe(_ signal: Signal<Int, NoError>, next: @escaping (Int) -> Void, completion: (() -> Void)?) -> Disposable {
    return signal.start(next: next, completed: completion)
}

func later(_ queue: Queue, _ f: @escaping () -> Void) -> Disposable {
    queue.async(f)
    return ActionDisposable(action: f)
}

final class Counter {
    var total = 0
    var onChange: ((Int) -> Void)?

    func add(_ value: Int) {
        total += value
    }

    func bind(_ values: Signal<Int, NoError>) -> Disposable {
        var seen = 0
        func record(_ value: Int) {
            seen += value
        }
        let disposables = DisposableSet()
        disposables.add(values.start(next: self.add))
        disposables.add(values.start(next: self.onChange))
        disposables.add(values.start(next: { value in record(value) }))
        return disposables
    }
}

final class FileHandleDisposable: Disposable {
    var closed = false

    func dispose() {
        closed = true
    }
}
