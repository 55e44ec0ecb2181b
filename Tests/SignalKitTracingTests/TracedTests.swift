// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Tracing
import Dispatch
import InMemoryTracing
import SignalKit
import SignalKitTesting
import SignalKitTracing
import Testing
import Tracing

private enum Boom: Error, Equatable { case boom }

/// The names of a span's events, in order.
private func eventNames(_ span: FinishedInMemorySpan) -> [String] { span.events.map(\.name) }

/// An integer attribute of a span.
private func intAttribute(_ span: FinishedInMemorySpan, _ key: String) -> Int? {
    switch span.attributes[key]?.toSpanAttribute() {
    case .int64(let value): Int(value)
    case .int32(let value): Int(value)
    default: nil
    }
}

@Suite struct TracedTests {
    @Test func aCompletedSubscriptionIsOneSpanWithItsValueCount() {
        let tracer = InMemoryTracer()
        let log = EventLog()
        let handle = (Signal<Int, Boom>.sequence([1, 2, 3]) |> traced("prices", tracer: tracer)).start(
            next: { log.append("next \($0)") }, completed: { log.append("completed") })
        #expect(log.events == ["next 1", "next 2", "next 3", "completed"])
        let spans = tracer.finishedSpans
        #expect(spans.count == 1)
        #expect(spans.first?.operationName == "prices")
        #expect(spans.first.map(eventNames) == ["completed"])
        #expect(spans.first.flatMap { intAttribute($0, SignalKitTracing.valuesAttribute) } == 3)
        #expect(spans.first.flatMap { intAttribute($0, SignalKitTracing.timeToFirstValueAttribute) } != nil)
        #expect(spans.first?.errors.isEmpty == true)
        #expect(spans.first?.parentSpanID == nil)
        handle.dispose()
        // Disposal after the end adds nothing.
        #expect(tracer.finishedSpans.count == 1)
        #expect(tracer.finishedSpans.first.map(eventNames) == ["completed"])
    }

    @Test func anErrorIsRecordedOnTheSpan() {
        let tracer = InMemoryTracer()
        let source = TestSource<Int, Boom>("source", log: EventLog())
        let log = EventLog()
        let handle = (source.signal |> traced("orders", tracer: tracer)).start(error: { log.append("error \($0)") })
        source.putNext(1)
        #expect(tracer.finishedSpans.isEmpty)
        source.putError(.boom)
        #expect(log.events == ["error boom"])
        let span = tracer.finishedSpans.first
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.map(eventNames) == ["error"])
        #expect(span?.errors.count == 1)
        #expect((span?.errors.first?.error as? Boom) == .boom)
        #expect(span?.status?.code == .error)
        #expect(span.flatMap { intAttribute($0, SignalKitTracing.valuesAttribute) } == 1)
        handle.dispose()
        #expect(tracer.finishedSpans.count == 1)
    }

    @Test func disposalBeforeTheEndEndsTheSpan() {
        let tracer = InMemoryTracer()
        let source = TestSource<Int, NoError>("source", log: EventLog())
        let handle = (source.signal |> traced("feed", tracer: tracer)).start()
        source.putNext(1)
        source.putNext(2)
        #expect(tracer.activeSpans.count == 1)
        handle.dispose()
        #expect(tracer.activeSpans.isEmpty)
        let span = tracer.finishedSpans.first
        #expect(tracer.finishedSpans.count == 1)
        #expect(span.map(eventNames) == ["disposed"])
        #expect(span.flatMap { intAttribute($0, SignalKitTracing.valuesAttribute) } == 2)
        #expect(span?.errors.isEmpty == true)
    }

    @Test func aSpanIsAChildOfTheContextAtStart() {
        let tracer = InMemoryTracer()
        let parent = tracer.startSpan("request")
        let handle = ServiceContext.withValue(parent.context) {
            (Signal<Int, NoError>.single(1) |> traced("lookup", tracer: tracer)).start()
        }
        parent.end()
        let child = tracer.finishedSpans.first { $0.operationName == "lookup" }
        #expect(child?.parentSpanID == parent.spanID)
        #expect(child?.traceID == parent.traceID)
        handle.dispose()
    }

    @Test func anInnerSignalStartedByATracedStageIsAChildSpan() {
        let tracer = InMemoryTracer()
        let source = TestSource<Int, NoError>("outer", log: EventLog())
        let handle =
            (source.signal
            |> traced("outer", tracer: tracer)
            |> mapToSignal { value in Signal<Int, NoError>.single(value) |> traced("inner", tracer: tracer) })
            .start()
        source.putNext(7)
        source.putCompletion()
        let outer = tracer.finishedSpans.first { $0.operationName == "outer" }
        let inner = tracer.finishedSpans.first { $0.operationName == "inner" }
        #expect(inner?.parentSpanID == outer?.spanID)
        #expect(inner?.traceID == outer?.traceID)
        handle.dispose()
    }

    /// Completion on one thread, disposal on another: every span ends
    /// exactly once, with exactly one of the two events.
    @Test func disposalRacingCompletionEndsEverySpanOnce() {
        let tracer = InMemoryTracer()
        let rounds = 200
        for _ in 0..<rounds {
            let source = TestSource<Int, NoError>("source", log: EventLog())
            let handle = (source.signal |> traced("race", tracer: tracer)).start()
            race(threads: 2) { thread in
                if thread == 0 { source.putCompletion() } else { handle.dispose() }
            }
        }
        let spans = tracer.finishedSpans
        #expect(spans.count == rounds)
        #expect(spans.allSatisfy { eventNames($0) == ["completed"] || eventNames($0) == ["disposed"] })
        #expect(tracer.activeSpans.isEmpty)
    }

    /// With the propagation installed, a value sent under a trace reaches a
    /// subscriber on another queue with that trace's context.
    @Test func theServiceContextCrossesAQueueHop() {
        SignalKitTracing.installServiceContextPropagation()
        let tracer = InMemoryTracer()
        let queue = Queue(name: "tracing.hop")
        let seen = Shared<[String?]>([])
        let pipe = ValuePipe<Int>()
        let handle = (pipe.signal() |> deliverOn(queue)).start(next: { _ in
            let spanID = ServiceContext.current.flatMap { tracer.activeSpan(identifiedBy: $0)?.spanID }
            seen.withLock { $0.append(spanID) }
        })
        let first = tracer.startSpan("first")
        let second = tracer.startSpan("second")
        ServiceContext.withValue(first.context) { pipe.putNext(1) }
        ServiceContext.withValue(second.context) { pipe.putNext(2) }
        pipe.putNext(3)
        queue.sync {}
        #expect(seen.value == [first.spanID, second.spanID, nil])
        first.end()
        second.end()
        handle.dispose()
    }
}
#endif
