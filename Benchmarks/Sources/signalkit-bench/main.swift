// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

// signalkit-bench: runs SignalKit's benchmark workloads in one process and
// prints a table: W1–W9 against OpenCombine and hand-written floors, and
// against AsyncStream / swift-async-algorithms where there is an equivalent
// (W2, W3, W5, W6, W9); W10 against AsyncStream; W12, the bounded hop, against
// all of them and a spinning SPSC ring; W13 and W15, the dedicated-thread hop
// and its wait strategies; W14, overload, SignalKit's buffer policies side by
// side; W16–W18, the context hook and inspection, on against off
// (Workloads.swift has the list and the targets).
// The bodies live in nonisolated functions in other files: top-level code is
// MainActor-isolated, which adds about 20 ns to every closure call.
import Foundation

guard let options = Options.parse(Array(CommandLine.arguments.dropFirst())) else {
    print(Options.usage)
    exit(CommandLine.arguments.contains("--help") || CommandLine.arguments.contains("-h") ? 0 : 2)
}
exit(run(options: options))
