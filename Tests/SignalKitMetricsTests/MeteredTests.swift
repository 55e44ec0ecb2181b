// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if Metrics
import Dispatch
import Metrics
import MetricsTestKit
import SignalKit
import SignalKitMetrics
import SignalKitTesting
import Testing

private enum Boom: Error { case boom }

@Suite(.serialized) struct MeteredTests {
    @Test func countsEachKindOfEventPerNamedSignal() throws {
        let metrics = TestMetrics()
        let source = TestSource<Int, Boom>("source", log: EventLog())
        let quotes = source.signal |> metered("quotes", factory: metrics)
        let first = quotes.start()
        source.putNext(1)
        source.putNext(2)
        source.putError(.boom)
        _ = first
        let second = quotes.start()
        source.putNext(3)
        second.dispose()
        _ = (Signal<Int, Boom>.complete() |> metered("quotes", factory: metrics)).start()
        let dimensions = [("signal", "quotes")]
        #expect(metrics.counterTotal(label: "signalkit_subscriptions_total", dimensions: dimensions) == 3)
        #expect(metrics.counterTotal(label: "signalkit_values_total", dimensions: dimensions) == 3)
        #expect(metrics.counterTotal(label: "signalkit_errors_total", dimensions: dimensions) == 1)
        #expect(metrics.counterTotal(label: "signalkit_completions_total", dimensions: dimensions) == 1)
        #expect(metrics.counterTotal(label: "signalkit_disposals_total", dimensions: dimensions) == 1)
        let timer = try metrics.expectTimer("signalkit_time_to_first_event", dimensions)
        #expect(timer.values.count == 3)
        #expect(timer.values.allSatisfy { $0 >= 0 })
    }

    @Test func theReporterRecordsLiveObjectGauges() throws {
        let metrics = TestMetrics()
        let pipe = ValuePipe<Int>()
        SignalKitMetricsReporter.recordNow(factory: metrics)
        let before = try metrics.expectGauge("signalkit_live_subscriptions").lastValue ?? -1
        let handles = (0..<3).map { _ in pipe.signal().start() }
        SignalKitMetricsReporter.recordNow(factory: metrics)
        let during = try metrics.expectGauge("signalkit_live_subscriptions").lastValue ?? -1
        handles.forEach { $0.dispose() }
        // Other tests of this process may hold subscriptions meanwhile: the
        // three are counted on top of whatever was live before.
        #expect(during >= before + 3)
        #expect(try metrics.expectGauge("signalkit_live_bags").lastValue ?? 0 >= 1)
    }

    @Test func theReporterAddsEachBoundarysDropsAndRecordsItsDepth() throws {
        let metrics = TestMetrics()
        let scheduler = VirtualTimeScheduler()
        let pipe = ValuePipe<Int>()
        let handle =
            (pipe.signal() |> named("metrics.drops") |> deliverOn(scheduler.makeQueue(), buffer: .droppingNewest(beyond: 2)))
            .start()
        for value in 1...5 { pipe.putNext(value) }
        SignalKitMetricsReporter.recordNow(factory: metrics)
        let dimensions = [("signal", "metrics.drops")]
        #expect(metrics.counterTotal(label: "signalkit_buffer_drops_total", dimensions: dimensions) == 3)
        #expect(try metrics.expectGauge("signalkit_buffer_depth", dimensions).lastValue == 2)
        #expect(try metrics.expectGauge("signalkit_buffer_subscriptions", dimensions).lastValue == 1)
        for value in 6...7 { pipe.putNext(value) }
        scheduler.run()
        SignalKitMetricsReporter.recordNow(factory: metrics)
        #expect(metrics.counterTotal(label: "signalkit_buffer_drops_total", dimensions: dimensions) == 5, "3 + 2, not 3 + 5")
        #expect(try metrics.expectGauge("signalkit_buffer_depth", dimensions).lastValue == 0)
        #expect(try metrics.expectGauge("signalkit_buffer_max_depth", dimensions).lastValue == 2)
        #expect(metrics.counterTotal(label: "signalkit_buffer_overflows_total", dimensions: dimensions) == 0)
        handle.dispose()
    }

    /// A name whose entry went away (no retention for it here) and came
    /// back: the reporter adds each new entry's drops from zero, whether it
    /// counted more or fewer than the one before.
    @Test func theReporterAddsANamesNewEntryFromZero() {
        let name = "metrics.newEntry"
        SignalKitDebug._setBufferStatisticsRetention(.zero, forNamesWithPrefix: name)
        defer { SignalKitDebug._setBufferStatisticsRetention(nil, forNamesWithPrefix: name) }
        let metrics = TestMetrics()
        let scheduler = VirtualTimeScheduler()
        func subscribe(dropping drops: Int) {
            let pipe = ValuePipe<Int>()
            let handle =
                (pipe.signal() |> named(name) |> deliverOn(scheduler.makeQueue(), buffer: .droppingNewest(beyond: 1)))
                .start()
            for value in 0...drops { pipe.putNext(value) }
            SignalKitMetricsReporter.recordNow(factory: metrics)
            handle.dispose()
            #expect(!SignalKitDebug.bufferStatistics().contains { $0.name == name }, "the entry went")
        }
        subscribe(dropping: 2)
        subscribe(dropping: 3)
        subscribe(dropping: 1)
        #expect(metrics.counterTotal(label: "signalkit_buffer_drops_total", dimensions: [("signal", name)]) == 6)
    }

    @Test func theReporterAddsEachDedicatedThreadsCountsAndRecordsItsDepths() throws {
        let metrics = TestMetrics()
        let name = "metrics.thread"
        let scheduler = DedicatedThreadScheduler(name: name, waitStrategy: .park, capacity: 2)
        let queue = Queue(scheduler: scheduler)
        let gate = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        queue.async {
            started.signal()
            gate.wait()
        }
        started.wait()
        let last = DispatchSemaphore(value: 0)
        for index in 0..<5 { queue.async { if index == 4 { last.signal() } } }
        SignalKitMetricsReporter.recordNow(factory: metrics)
        let dimensions = [("thread", name)]
        #expect(try metrics.expectGauge("signalkit_dedicated_thread_ring_depth", dimensions).lastValue == 2)
        #expect(try metrics.expectGauge("signalkit_dedicated_thread_spill_depth", dimensions).lastValue == 3)
        #expect(try metrics.expectGauge("signalkit_dedicated_threads", dimensions).lastValue == 1)
        #expect(metrics.counterTotal(label: "signalkit_dedicated_thread_spilled_total", dimensions: dimensions) == 3)
        #expect(metrics.counterTotal(label: "signalkit_dedicated_thread_executed_total", dimensions: dimensions) == 1)
        gate.signal()
        last.wait()
        // After shutdown the thread's totals stay (exited threads are summed
        // by name); the counters receive increments, not totals again.
        scheduler.shutdown()
        queue.async {}
        SignalKitMetricsReporter.recordNow(factory: metrics)
        #expect(metrics.counterTotal(label: "signalkit_dedicated_thread_executed_total", dimensions: dimensions) == 6)
        #expect(metrics.counterTotal(label: "signalkit_dedicated_thread_spilled_total", dimensions: dimensions) == 3)
        #expect(metrics.counterTotal(label: "signalkit_dedicated_thread_refused_total", dimensions: dimensions) == 1)
        #expect(try metrics.expectGauge("signalkit_dedicated_threads", dimensions).lastValue == 0)
        #expect(try metrics.expectGauge("signalkit_dedicated_thread_spill_depth", dimensions).lastValue == 0)
    }
}

#endif  // Metrics
