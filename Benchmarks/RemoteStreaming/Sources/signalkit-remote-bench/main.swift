// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// Usage: signalkit-remote-bench [--reps N] [--burst N] [--paced N] [--rate HZ]
//        signalkit-remote-bench server     (started by the client itself)
let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "server" {
    try await runServer()
} else {
    func option(_ name: String, _ fallback: Int) -> Int {
        guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
            let value = Int(arguments[index + 1])
        else { return fallback }
        return value
    }
    try await runClient(
        reps: option("--reps", 5),
        burst: option("--burst", 10_000),
        paced: option("--paced", 2_000),
        rateHz: option("--rate", 1_000)
    )
}
