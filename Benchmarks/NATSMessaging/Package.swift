// swift-tools-version: 6.2
// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
//===----------------------------------------------------------------------===//
// signalkit-nats-bench: SignalKitNATS through a local nats-server against
// nats-py and a raw-socket floor (W19 publish → subscribe throughput, W20
// request/reply latency, W21 JetStream consume with acknowledgements). A
// package of its own so that the main benchmark build does not compile
// swift-nio-ssl's BoringSSL.
//===----------------------------------------------------------------------===//
import PackageDescription

let package = Package(
    name: "SignalKitNATSBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "SignalKit", path: "../..", traits: ["NATS"])
    ],
    targets: [
        .executableTarget(
            name: "signalkit-nats-bench",
            dependencies: [
                .product(name: "SignalKit", package: "SignalKit"),
                .product(name: "SignalKitNATS", package: "SignalKit"),
            ]
        )
    ]
)
