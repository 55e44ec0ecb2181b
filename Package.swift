// swift-tools-version: 6.2
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// SignalKit: Telegram's SwiftSignalKit model for Swift on Linux servers.
//
// The core (SignalKit + CSignalRuntime) depends on nothing but the toolchain
// and libatomic_ops (Debian `libatomic-ops-dev`, header-only on x86-64).
// Benchmarks live in their own package under Benchmarks/.
//===----------------------------------------------------------------------===//
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .define("SIGNALKIT_INTERNAL_CHECKS", .when(configuration: .debug)),
]

let package = Package(
    name: "SignalKit",
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "SignalKit", targets: ["SignalKit"]),
        .library(name: "SignalKitTesting", targets: ["SignalKitTesting"]),
    ],
    targets: [
        // libatomic_ops (header-only on x86-64 and AArch64 with GCC/Clang
        // atomics). Declared so that a machine without it gets SwiftPM's
        // "install libatomic-ops-dev" hint instead of a bare missing header.
        .systemLibrary(
            name: "CAtomicOps",
            pkgConfig: "atomic_ops",
            providers: [.apt(["libatomic-ops-dev"]), .brew(["libatomic_ops"])]
        ),
        // The concurrency core. Not a product: only Sources/SignalKit/Runtime imports it.
        .target(
            name: "CSignalRuntime",
            dependencies: ["CAtomicOps"],
            cSettings: [.define("CSR_REQUIRE_GCC_ATOMICS")]
        ),
        .target(
            name: "SignalKit",
            dependencies: ["CSignalRuntime"],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitTesting",
            dependencies: ["SignalKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitTests",
            dependencies: ["SignalKit", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitStressTests",
            dependencies: ["SignalKit", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
        // Counts allocations for SignalKitAllocationTests (a malloc interposer
        // linked into the test executable; compiled out under sanitizers).
        .target(
            name: "CAllocationCounter",
            path: "Tests/CAllocationCounter"
        ),
        .testTarget(
            name: "SignalKitAllocationTests",
            dependencies: ["SignalKit", "CAllocationCounter"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CSignalRuntimeTests",
            dependencies: ["CSignalRuntime", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
    ]
)
