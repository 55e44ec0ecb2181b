// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// SignalKitTracing: swift-distributed-tracing for signals. The
// `ServiceContext` of the code that sends an event travels with it across
// SignalKit's asynchronous boundaries (`ServiceContextPropagation`, one call
// at bootstrap), and `traced(_:)` gives a subscription a span of its own.
// Built only with the package's `Tracing` trait (an empty module without it).

#if Tracing
public import SignalKit
public import Tracing
import Dispatch
import Synchronization

/// Carries swift-distributed-tracing's `ServiceContext` (trace, span,
/// baggage) from the code that sends an event to the code that receives it
/// on the other side of SignalKit's asynchronous boundaries: the rule of
/// `SignalContextPropagation`, for `ServiceContext.current`.
///
/// Install it once, at bootstrap: `SignalContext.install(ServiceContextPropagation())`
/// (or `SignalKitTracing.installServiceContextPropagation()`).
public struct ServiceContextPropagation: SignalContextPropagation {
    public init() {}

    public func currentContext() -> ServiceContext? { ServiceContext.current }

    public func withContext(_ context: ServiceContext?, _ body: () -> Void) {
        ServiceContext.withValue(context, operation: body)
    }
}

/// SignalKitTracing's bootstrap.
public enum SignalKitTracing {
    /// Installs `ServiceContextPropagation` for the whole process: from then
    /// on every asynchronous boundary delivers an event in the
    /// `ServiceContext` of the code that sent it. Call it once, at bootstrap.
    public static func installServiceContextPropagation() {
        SignalContext.install(ServiceContextPropagation())
    }

    /// The span attribute holding how many values the subscription delivered.
    public static let valuesAttribute = "signalkit.values"
    /// The span attribute holding the nanoseconds from the subscription's
    /// start to its first value (absent when no value came).
    public static let timeToFirstValueAttribute = "signalkit.time_to_first_value_ns"
}

/// A failure of a traced signal whose error type is not an `Error`
/// (recorded on its span with its description).
public struct TracedSignalFailure: Error, CustomStringConvertible {
    public let description: String
}

/// Traces each subscription with one span, from `start` to its terminal
/// event or its disposal, on `InstrumentationSystem.tracer`.
///
/// - Parameters:
///   - operationName: the span's name.
///   - kind: the span's kind.
/// - Returns: a function from a signal to the same signal, traced.
///
/// **The span.** Started when the signal is started, as a child of the
/// `ServiceContext` current at `start` (a new trace without one). Upstream is
/// subscribed, and every event is delivered downstream, inside the span's
/// context: a traced signal started from a traced stage's callback (an inner
/// signal of `mapToSignal` or `switchToLatest`) gets a child span.
/// Attributes: `signalkit.values` (the values delivered) and
/// `signalkit.time_to_first_value_ns`. It ends exactly once, on the first of:
/// * completion: a `completed` event;
/// * error: the error recorded (its description when `E` is not an
///   `Error`), the status `.error`, an `error` event;
/// * disposal before either: a `disposed` event.
///
/// **Threading:** events pass through on the thread that sends them. The
/// span ends on the thread of the terminal event or of `dispose()`.
///
/// **Cost:** per subscription a span; per value a counter increment and the
/// span's context pushed around the delivery (a task-local push and pop).
public func traced<T, E>(_ operationName: String, ofKind kind: SpanKind = .internal) -> (Signal<T, E>) -> Signal<T, E> {
    _traced(operationName) { name, context in
        startSpan(name, context: context, ofKind: kind)
    }
}

/// `traced(_:ofKind:)` on the given tracer instead of
/// `InstrumentationSystem.tracer` (for tests, or a second tracer).
public func traced<T, E, SpanTracer: Tracer>(
    _ operationName: String,
    ofKind kind: SpanKind = .internal,
    tracer: SpanTracer
) -> (Signal<T, E>) -> Signal<T, E> {
    _traced(operationName) { name, context in
        tracer.startSpan(name, context: context, ofKind: kind)
    }
}

private func _traced<T, E>(
    _ operationName: String,
    startSpan: @escaping @Sendable (String, ServiceContext) -> any Span
) -> (Signal<T, E>) -> Signal<T, E> {
    { signal in
        Signal { subscriber in
            let subscription = _TracedSubscription(span: startSpan(operationName, ServiceContext.current ?? .topLevel))
            let spanContext = subscription.span.context
            let upstream = ServiceContext.withValue(spanContext) {
                signal.start(
                    next: { value in
                        subscription.recordValue()
                        ServiceContext.withValue(spanContext) { subscriber.putNext(value) }
                    },
                    error: { error in
                        subscription.end(.failed(error))
                        ServiceContext.withValue(spanContext) { subscriber.putError(error) }
                    },
                    completed: {
                        subscription.end(.completed)
                        ServiceContext.withValue(spanContext) { subscriber.putCompletion() }
                    }
                )
            }
            return ActionDisposable {
                upstream.dispose()
                subscription.end(.disposed)
            }
        }
    }
}

/// One traced subscription: its span, its value count and the first value's
/// time, and the claim that ends the span exactly once.
private final class _TracedSubscription: Sendable {
    enum Ending {
        case completed
        case failed(Any)
        case disposed
    }

    let span: any Span
    private let startNanoseconds = DispatchTime.now().uptimeNanoseconds
    private let values = Atomic<Int>(0)
    private let firstValueNanoseconds = Atomic<UInt64>(0)
    private let ended = Atomic<Bool>(false)

    init(span: any Span) {
        self.span = span
    }

    func recordValue() {
        if values.wrappingAdd(1, ordering: .relaxed).oldValue == 0 {
            firstValueNanoseconds.store(DispatchTime.now().uptimeNanoseconds - startNanoseconds, ordering: .relaxed)
        }
    }

    /// Ends the span, unless it has ended already.
    func end(_ ending: Ending) {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return }
        span.attributes[SignalKitTracing.valuesAttribute] = values.load(ordering: .relaxed)
        if values.load(ordering: .relaxed) > 0 {
            span.attributes[SignalKitTracing.timeToFirstValueAttribute] = Int(
                firstValueNanoseconds.load(ordering: .relaxed))
        }
        switch ending {
        case .completed:
            span.addEvent(SpanEvent(name: "completed"))
        case .failed(let failure):
            span.recordError((failure as? any Error) ?? TracedSignalFailure(description: "\(failure)"))
            span.setStatus(SpanStatus(code: .error))
            span.addEvent(SpanEvent(name: "error"))
        case .disposed:
            span.addEvent(SpanEvent(name: "disposed"))
        }
        span.end()
    }
}
#endif
