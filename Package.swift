// swift-tools-version: 6.2
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// SignalKit: Telegram's SwiftSignalKit model for Swift on Linux servers.
//
// The core (SignalKit + CSignalRuntime) depends on nothing but the toolchain
// and libatomic_ops (Debian `libatomic-ops-dev`, header-only on x86-64).
// The integrations (SignalKitNIO, SignalKitLogging, SignalKitMetrics,
// SignalKitGRPC, SignalKitPostgres, SignalKitTracing, SignalKitInspector,
// SignalKitNATS) are products whose package dependencies are guarded by traits
// (NIO, Logging, Metrics, GRPC, Postgres, Tracing, Inspector, NATS; none enabled
// by default): a client that does not enable a trait does not even fetch
// swift-nio, swift-log, swift-metrics, grpc-swift or postgres-nio (measured with
// Swift 6.3.1; without traits, separate products are not built but their
// dependencies are still fetched). A client enables what it uses:
// `.package(url: …, from: …, traits: ["NIO", "Logging", "Metrics"])`. An
// integration product built without its trait is empty. Benchmarks live in
// their own package under Benchmarks/.
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
        .library(name: "SignalKitConformance", targets: ["SignalKitConformance"]),
        .library(name: "SignalKitNIO", targets: ["SignalKitNIO"]),
        .library(name: "SignalKitLogging", targets: ["SignalKitLogging"]),
        .library(name: "SignalKitMetrics", targets: ["SignalKitMetrics"]),
        .library(name: "SignalKitGRPC", targets: ["SignalKitGRPC"]),
        .library(name: "SignalKitPostgres", targets: ["SignalKitPostgres"]),
        .library(name: "SignalKitTracing", targets: ["SignalKitTracing"]),
        .library(name: "SignalKitInspector", targets: ["SignalKitInspector"]),
        .library(name: "SignalKitNATS", targets: ["SignalKitNATS"]),
    ],
    traits: [
        .trait(name: "NIO", description: "SignalKitNIO: event loops as queues, futures as signals (swift-nio)"),
        .trait(name: "Logging", description: "SignalKitLogging: event logging into swift-log"),
        .trait(name: "Metrics", description: "SignalKitMetrics: counters, timers and gauges in swift-metrics"),
        .trait(name: "GRPC", description: "SignalKitGRPC: cold signals across processes as server-streaming RPCs (grpc-swift 2)"),
        .trait(name: "Postgres", description: "SignalKitPostgres: a LISTEN/NOTIFY change feed as a hot signal (postgres-nio)"),
        .trait(
            name: "Tracing",
            description: "SignalKitTracing: ServiceContext across every hop, a span per subscription (swift-distributed-tracing)"),
        .trait(
            name: "Inspector",
            description: "SignalKitInspector's SwiftNIO HTTP handler (swift-nio); the page and the JSON need no trait"),
        .trait(
            name: "NATS",
            description: "SignalKitNATS: subjects as hot signals, publish, request/reply (NATS client protocol on swift-nio)"),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // Only for the integration products, each behind its trait (see the header).
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        // The HTTP/2 transport (BoringSSL, NIOHTTP2): SignalKitGRPC's tests
        // only; the library itself needs GRPCCore, its users pick a transport.
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
        // SignalKitNATS's TLS (NIOSSL, BoringSSL); grpc-swift-nio-transport depends on it too.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
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
        // The event contract as numbered rules, checked over any source,
        // operator, boundary or bridge (no test framework: failures are values).
        .target(
            name: "SignalKitConformance",
            dependencies: ["SignalKit", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
        // Integrations, one product each.
        .target(
            name: "SignalKitNIO",
            dependencies: ["SignalKit", .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"]))],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitLogging",
            dependencies: ["SignalKit", .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"]))],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitMetrics",
            dependencies: [
                "SignalKit", .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitGRPC",
            dependencies: [
                "SignalKit",
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                // The call's trace context in its metadata (the installed instrument's inject/extract).
                .product(name: "Instrumentation", package: "swift-distributed-tracing", condition: .when(traits: ["GRPC"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitPostgres",
            dependencies: [
                "SignalKit",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Postgres"])),
                // A sender's trace context in its payloads (the installed instrument's inject/extract).
                .product(name: "Instrumentation", package: "swift-distributed-tracing", condition: .when(traits: ["Postgres"])),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "SignalKitTracing",
            dependencies: [
                "SignalKit",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The live graph's page (embedded in the binary) and JSON; the NIO
        // handler with the Inspector trait.
        .target(
            name: "SignalKitInspector",
            dependencies: [
                "SignalKit",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Inspector"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Inspector"])),
            ],
            resources: [.embedInCode("inspector.html")],
            swiftSettings: swiftSettings
        ),
        // A NATS client on SwiftNIO: subjects as hot signals.
        .target(
            name: "SignalKitNATS",
            dependencies: [
                "SignalKit",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NATS"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NATS"])),
                // TLS, when the server requires it or the options ask for it.
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["NATS"])),
                .product(name: "NIOTLS", package: "swift-nio", condition: .when(traits: ["NATS"])),
                // A sender's trace context in its headers (the installed instrument's inject/extract).
                .product(name: "Instrumentation", package: "swift-distributed-tracing", condition: .when(traits: ["NATS"])),
                // Its counters exported (`reportMetrics`; no backend chosen).
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["NATS"])),
            ],
            swiftSettings: swiftSettings
        ),
        // The listener process that SignalKitPostgresTests launches (two of
        // them at once); empty without the Postgres trait.
        .executableTarget(
            name: "SignalKitPostgresListener",
            dependencies: [
                "SignalKitPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
            ],
            path: "Tests/SignalKitPostgresListener",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitTests",
            dependencies: ["SignalKit", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitConformanceTests",
            dependencies: ["SignalKit", "SignalKitTesting", "SignalKitConformance"],
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
            name: "SignalKitNIOTests",
            dependencies: [
                "SignalKitNIO", "SignalKitTesting", "SignalKitConformance",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["NIO"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["NIO"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitLoggingTests",
            dependencies: [
                "SignalKitLogging", "SignalKitTesting",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "InMemoryLogging", package: "swift-log", condition: .when(traits: ["Logging"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitMetricsTests",
            dependencies: [
                "SignalKitMetrics", "SignalKitTesting",
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitGRPCTests",
            dependencies: [
                "SignalKitGRPC", "SignalKitTesting", "SignalKitGRPCTestClient", "SignalKitConformance",
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["GRPC"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["GRPC"])),
                .product(
                    name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport", condition: .when(traits: ["GRPC"])),
            ],
            swiftSettings: swiftSettings
        ),
        // A client process for SignalKitGRPCTests (killed with SIGKILL by a
        // test); an empty program without the GRPC trait.
        .executableTarget(
            name: "SignalKitGRPCTestClient",
            dependencies: [
                "SignalKitGRPC", "SignalKit",
                .product(name: "GRPCCore", package: "grpc-swift-2", condition: .when(traits: ["GRPC"])),
                .product(
                    name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport", condition: .when(traits: ["GRPC"])),
            ],
            path: "Tests/SignalKitGRPCTestClient",
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitPostgresTests",
            dependencies: [
                "SignalKitPostgres", "SignalKitTesting", "SignalKitPostgresListener", "SignalKitConformance",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Postgres"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Postgres"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitNATSTests",
            dependencies: [
                "SignalKitNATS", "SignalKitTesting", "SignalKitConformance",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["NATS"])),
                .product(name: "Instrumentation", package: "swift-distributed-tracing", condition: .when(traits: ["NATS"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["NATS"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["NATS"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["NATS"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitTracingTests",
            dependencies: [
                "SignalKitTracing", "SignalKitTesting",
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignalKitInspectorTests",
            dependencies: [
                "SignalKitInspector", "SignalKitTesting",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Inspector"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Inspector"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Inspector"])),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CSignalRuntimeTests",
            dependencies: ["CSignalRuntime", "SignalKitTesting"],
            swiftSettings: swiftSettings
        ),
    ]
)
