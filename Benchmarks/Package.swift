// swift-tools-version: 6.1
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// signalkit-bench: SignalKit's benchmark suite (workloads W1–W9,
// defined in Sources/signalkit-bench/Workloads.swift) against OpenCombine, hand-written floors
// and AsyncStream / swift-async-algorithms pipelines, interleaved in one process. A separate package so that benchmark
// dependencies never enter SignalKit's dependency graph.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "SignalKitBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "signalkit-bench", targets: ["signalkit-bench"]),
        // Loaded with LD_PRELOAD by the allocation pass only.
        .library(name: "SignalKitMallocCounter", type: .dynamic, targets: ["MallocCounter"]),
    ],
    dependencies: [
        .package(name: "SignalKit", path: "../"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // The Swift 6-native peer (AsyncStream pipelines: combineLatest, async sequences).
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.0"),
    ],
    targets: [
        .target(name: "MallocCounter"),
        .executableTarget(
            name: "signalkit-bench",
            dependencies: [
                .product(name: "SignalKit", package: "SignalKit"),
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        ),
    ]
)
