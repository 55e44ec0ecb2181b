// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
public import GRPCCore
internal import Instrumentation
public import SignalKit

extension GRPCClient {
    /// A cold signal of a remote signal: each subscription is one call of
    /// `method` with `request`.
    ///
    /// The server's values arrive as the signal's values, in order; status OK
    /// completes the signal; any other status (the server signal's error,
    /// `resourceExhausted` from a full buffer, `unavailable` when the server
    /// cannot be reached or goes away) fails it with that `RPCError`, its
    /// message included. `dispose()` cancels the call, which disposes the
    /// server's subscription. The client must be running
    /// (`runConnections()`) for calls to proceed.
    ///
    /// The `ServiceContext` current where the signal is started (its trace)
    /// goes with the call, in its metadata (the process's instrument's
    /// `inject`): the server's subscription runs in it.
    ///
    /// Events are delivered one at a time on the task that runs the call (a
    /// thread of Swift's global concurrent executor); use `deliverOn` to move
    /// them to a queue. A call ended by `dispose()` ends silently: its
    /// cancellation is not reported as an error.
    ///
    /// Reconnecting is a composition: resubscribe after an error with a
    /// delay (`retry`), so that a server restart or a dropped connection
    /// starts a new call once the server is back:
    ///
    /// ```swift
    /// let live: Signal<Tick, NoError> =
    ///     client.remoteSignal(ticks, request: Subscribe(symbol: "ACME"))
    ///     |> retry(0.1, maxDelay: 2.0, onQueue: Queue())
    /// ```
    ///
    /// (`retry(retryOnError:delayIncrement:maxDelay:maxRetries:onQueue:)` retries
    /// only some statuses, e.g. `unavailable`; `restartIfError` resubscribes
    /// with no delay at all, which spins while the server is down.) Values
    /// the server produced while no call was open are not replayed: a
    /// signal that must not miss any carries a snapshot first.
    ///
    /// - Parameters:
    ///   - method: the method, shared with the server.
    ///   - request: sent with each call.
    ///   - metadata: sent with each call.
    ///   - options: the calls' options (a `timeout` ends a call with
    ///     `deadlineExceeded`, which suits finite signals only).
    /// - Returns: a signal that starts one call per subscription.
    public func remoteSignal<Request, Value>(
        _ method: RemoteSignalMethod<Request, Value>,
        request: Request,
        metadata: Metadata = [:],
        options: CallOptions = .defaults
    ) -> Signal<Value, RPCError> {
        Signal { subscriber in
            // The subscriber's trace goes with the call (TraceContext.swift).
            let metadata = metadata.injecting(ServiceContext.current)
            let task = Task {
                do {
                    try await self.serverStreaming(
                        request: ClientRequest(message: request, metadata: metadata),
                        descriptor: method.descriptor,
                        serializer: method.requestSerializer,
                        deserializer: method.valueDeserializer,
                        options: options
                    ) { response in
                        for try await value in response.messages {
                            subscriber.putNext(value)
                        }
                    }
                    subscriber.putCompletion()
                } catch {
                    subscriber.putError(RPCError(signalError: error))
                }
            }
            return subscriber._disposable(cancelling: task)
        }
    }
}

#endif  // GRPC
