// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

/// The precedence of `|>`: left-associative, binding tighter than assignment.
precedencegroup PipeRight {
    associativity: left
    higherThan: DefaultPrecedence
}

/// Applies a function to a value: `signal |> map { $0 + 1 } |> take(1)`.
infix operator |> : PipeRight

/// Plain application: `x |> f` is `f(x)`, and `1 |> f |> g` is `g(f(1))`.
@inlinable
@inline(__always)
public func |> <T, U>(value: T, function: (T) -> U) -> U {
    function(value)
}

/// Returns its argument unchanged.
@inlinable
public func identity<A>(a: A) -> A {
    a
}
