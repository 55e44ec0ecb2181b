// swift-tools-version: 6.2
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// signalkit-remote-bench: cross-process streaming through SignalKitGRPC
// against a plain grpc-swift server-streaming handler fed by an AsyncStream
// (same messages, same process pair, same run). A package of its own so that
// the main benchmark build does not compile BoringSSL and NIOHTTP2.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "SignalKitRemoteBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SignalKit", path: "../..", traits: ["GRPC"]),
        .package(url: "https://github.com/grpc/grpc-swift-2", from: "2.4.3"),
        .package(url: "https://github.com/grpc/grpc-swift-nio-transport", from: "2.9.2"),
    ],
    targets: [
        .executableTarget(
            name: "signalkit-remote-bench",
            dependencies: [
                .product(name: "SignalKit", package: "SignalKit"),
                .product(name: "SignalKitGRPC", package: "SignalKit"),
                .product(name: "GRPCCore", package: "grpc-swift-2"),
                .product(name: "GRPCNIOTransportHTTP2Posix", package: "grpc-swift-nio-transport"),
            ]
        )
    ]
)
