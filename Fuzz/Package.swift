// swift-tools-version: 6.1
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// SignalKit's fuzzers, a package of their own (like Benchmarks/): built by
// scripts/fuzz with libFuzzer (`-sanitize=fuzzer,address`, from the
// toolchain) in .build-fuzz, or plainly, as a replayer of saved inputs.
// See README.md.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "SignalKitFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(path: "..")
    ],
    targets: [
        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CFuzzerShim"),
        // The differential fuzzer of the operator algebra.
        .executableTarget(
            name: "CoreFuzzer",
            dependencies: [
                "CFuzzerShim",
                .product(name: "SignalKit", package: "main"),
                .product(name: "SignalKitTesting", package: "main"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
    ]
)
