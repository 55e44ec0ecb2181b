// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if GRPC
internal import GRPCCore
internal import Instrumentation

// A call carries its caller's trace: the client injects the `ServiceContext`
// current where the remote signal is started into the call's metadata, with
// the process's instrument (`InstrumentationSystem.instrument`: a W3C
// `traceparent` header with swift-otel's tracer, nothing with the default
// no-op one); the server extracts it and makes and subscribes the served
// signal inside it, so the subscription's events, logs and spans belong to
// the caller's trace.

/// Writes a context's fields into a call's metadata.
struct _MetadataInjector: Injector {
    func inject(_ value: String, forKey key: String, into metadata: inout Metadata) {
        metadata.replaceOrAddString(value, forKey: key)
    }
}

/// Reads a context's fields from a call's metadata.
struct _MetadataExtractor: Extractor {
    func extract(key: String, from metadata: Metadata) -> String? {
        for value in metadata[stringValues: key] { return value }
        return nil
    }
}

extension Metadata {
    /// This metadata with `context` injected by the process's instrument
    /// (unchanged when there is no context).
    func injecting(_ context: ServiceContext?) -> Metadata {
        guard let context else { return self }
        var metadata = self
        InstrumentationSystem.instrument.inject(context, into: &metadata, using: _MetadataInjector())
        return metadata
    }

    /// `base` (or a new top-level context) with what the process's
    /// instrument extracts from this metadata.
    func extractedContext(base: ServiceContext?) -> ServiceContext {
        var context = base ?? .topLevel
        InstrumentationSystem.instrument.extract(self, into: &context, using: _MetadataExtractor())
        return context
    }
}
#endif  // GRPC
