// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import SignalKit
import SignalKitNATS

/// A JetStream cluster of three nats-servers of a test's own, on
/// 127.0.0.1: routes on free ports, client ports picked by each server,
/// storage in their temporary directories; stopped by the test.
final class NATSTestCluster: @unchecked Sendable {  // mutated by the one test that owns it
    let servers: [NATSTestServer]
    let names: [String]

    var urls: [String] { servers.map(\.url) }

    init(size: Int = 3) throws {
        let routePorts = try (0..<size).map { _ in try Self.freePort() }
        let clusterName = "signalkit-\(UInt32.random(in: 0...UInt32.max))"
        var servers: [NATSTestServer] = []
        var names: [String] = []
        for index in 0..<size {
            let name = "n\(index + 1)"
            let routes = routePorts.enumerated().filter { $0.offset != index }
                .map { "nats-route://127.0.0.1:\($0.element)" }.joined(separator: ", ")
            let config = """
                server_name: \(name)
                jetstream { store_dir: "@DIR@/jetstream" }
                cluster {
                  name: \(clusterName)
                  listen: 127.0.0.1:\(routePorts[index])
                  routes: [\(routes)]
                }
                """
            servers.append(try NATSTestServer(config: config))
            names.append(name)
        }
        self.servers = servers
        self.names = names
    }

    deinit { stop() }

    func stop() {
        for server in servers { server.stop() }
    }

    /// The server named `name`.
    func server(named name: String) -> NATSTestServer? {
        names.firstIndex(of: name).map { servers[$0] }
    }

    /// A TCP port nothing listens on now (bound to port 0, then closed).
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw NATSTestServer.ServerError(description: "socket failed") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else { throw NATSTestServer.ServerError(description: "bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
#endif
