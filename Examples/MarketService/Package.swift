// swift-tools-version: 6.2
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// An example live-market service on Hummingbird 2, built on SignalKit and its
// server integrations (event loops, swift-log, swift-metrics, gRPC,
// PostgreSQL, NATS, tracing) and on swift-service-lifecycle. It runs alone or as several
// instances (one serves the feed over gRPC, the others relay it). See
// README.md.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "MarketService",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(
            name: "SignalKit", path: "../..",
            traits: ["NIO", "Logging", "Metrics", "GRPC", "Postgres", "NATS", "Tracing", "Inspector"]),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.3"),
    ],
    targets: [
        .target(
            name: "MarketService",
            dependencies: [
                .product(name: "SignalKit", package: "SignalKit"),
                .product(name: "SignalKitNIO", package: "SignalKit"),
                .product(name: "SignalKitLogging", package: "SignalKit"),
                .product(name: "SignalKitMetrics", package: "SignalKit"),
                .product(name: "SignalKitGRPC", package: "SignalKit"),
                .product(name: "SignalKitPostgres", package: "SignalKit"),
                .product(name: "SignalKitNATS", package: "SignalKit"),
                .product(name: "SignalKitTracing", package: "SignalKit"),
                .product(name: "SignalKitInspector", package: "SignalKit"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
        .executableTarget(
            name: "market-server",
            dependencies: [
                "MarketService",
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
            ]
        ),
    ]
)
