// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Usage: signalkit-nats-bench --url nats://127.0.0.1:PORT [--reps N] [--quick]
//        [--messages N] [--filter W19,W20,W21] [--peer SignalKit|nats-py|floor]
// The server is the caller's (scripts/bench starts one with JetStream).
var settings = Settings()
var arguments = Array(CommandLine.arguments.dropFirst())
while !arguments.isEmpty {
    let name = arguments.removeFirst()
    switch name {
    case "--quick":
        settings.quick = true
    case "--url", "--reps", "--messages", "--filter", "--peer":
        guard !arguments.isEmpty else {
            progress("\(name) needs a value")
            exit(2)
        }
        let value = arguments.removeFirst()
        switch name {
        case "--url": settings.url = value
        case "--reps": settings.reps = max(3, Int(value) ?? 5)
        case "--messages": settings.messages = Int(value)
        case "--peer":
            guard let peer = Peer(rawValue: value) else {
                progress("--peer takes SignalKit, nats-py or floor")
                exit(2)
            }
            settings.peer = peer
        default: settings.filter = Set(value.uppercased().split(separator: ",").map(String.init))
        }
    default:
        progress("unknown option \(name)")
        exit(2)
    }
}
do {
    try runBenchmarks(settings)
} catch {
    progress("\(error)")
    exit(1)
}
