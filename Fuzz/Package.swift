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
        .package(name: "SignalKit", path: ".."),
        // GRPCCore alone, for RequestFuzzer (no transport, no TLS).
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
    ],
    targets: [
        // libFuzzer's driver entry point, declared for Swift.
        .target(name: "CFuzzerShim"),
        // The `main` every fuzzer shares: libFuzzer's driver, or a replay of files.
        .target(name: "FuzzSupport", dependencies: ["CFuzzerShim"], swiftSettings: [.swiftLanguageMode(.v6)]),
        // The differential fuzzer of the operator algebra.
        .executableTarget(
            name: "CoreFuzzer",
            dependencies: [
                "FuzzSupport",
                .product(name: "SignalKit", package: "SignalKit"),
                .product(name: "SignalKitTesting", package: "SignalKit"),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // SignalKitPostgres's NOTIFY payload parser (its source file, linked:
        // no PostgreSQL, no package dependency).
        .executableTarget(
            name: "PayloadFuzzer",
            dependencies: ["FuzzSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // SignalKitGRPC's request decoding (its source file, linked; `GRPC`
        // defined as the trait would).
        .executableTarget(
            name: "RequestFuzzer",
            dependencies: ["FuzzSupport", .product(name: "GRPCCore", package: "grpc-swift-2")],
            swiftSettings: [.swiftLanguageMode(.v6), .define("GRPC")]
        ),
        // SignalKitNATS's protocol parser (its source file, linked: Foundation
        // only, no NIO, no server; `NATS` defined as the trait would).
        .executableTarget(
            name: "NATSParserFuzzer",
            dependencies: ["FuzzSupport"],
            swiftSettings: [.swiftLanguageMode(.v6), .define("NATS")]
        ),
    ]
)
