// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import Foundation
import SignalKit
import SignalKitNATS
import Testing

/// TLS against nats-servers with `tls { … }` blocks: certificates made at
/// test time with /usr/bin/openssl (a CA, a server certificate for
/// 127.0.0.1, a client certificate, and a CA that signed neither).
@Suite struct TLSTests {
    /// The PEM files, made once for the process.
    struct Certificates: Sendable {
        let directory: String
        var ca: String { directory + "/ca.pem" }
        var otherCA: String { directory + "/other-ca.pem" }
        var serverCertificate: String { directory + "/server.pem" }
        var serverKey: String { directory + "/server.key" }
        var clientCertificate: String { directory + "/client.pem" }
        var clientKey: String { directory + "/client.key" }
    }

    static let certificates: Result<Certificates, NATSTestServer.ServerError> = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("signalkit-nats-tls-\(UUID().uuidString)")
            .path
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n".write(
                toFile: directory + "/server.ext", atomically: true, encoding: .utf8)
            try "extendedKeyUsage=clientAuth\n".write(toFile: directory + "/client.ext", atomically: true, encoding: .utf8)
        } catch {
            return .failure(.init(description: "cannot write into \(directory): \(error)"))
        }
        let key = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        let steps: [[String]] = [
            ["req", "-x509"] + key + ["-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=SignalKit test CA"],
            ["req", "-x509"] + key + ["-keyout", "other-ca.key", "-out", "other-ca.pem", "-days", "2", "-subj", "/CN=Other CA"],
            ["req"] + key + ["-keyout", "server.key", "-out", "server.csr", "-subj", "/CN=127.0.0.1"],
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "2",
                "-out", "server.pem", "-days", "2", "-extfile", "server.ext",
            ],
            ["req"] + key + ["-keyout", "client.key", "-out", "client.csr", "-subj", "/CN=signalkit-client"],
            [
                "x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-set_serial", "3",
                "-out", "client.pem", "-days", "2", "-extfile", "client.ext",
            ],
        ]
        for arguments in steps {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.currentDirectoryURL = URL(fileURLWithPath: directory)
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            do {
                try process.run()
                process.waitUntilExit()
            } catch {
                return .failure(.init(description: "openssl \(arguments.joined(separator: " ")): \(error)"))
            }
            guard process.terminationStatus == 0 else {
                return .failure(
                    .init(description: "openssl \(arguments.joined(separator: " ")) exited \(process.terminationStatus)"))
            }
        }
        return .success(Certificates(directory: directory))
    }()

    /// A server that requires TLS; with `verifyClients`, a client
    /// certificate signed by the CA too.
    static func server(verifyClients: Bool = false) throws -> (NATSTestServer, Certificates) {
        let files = try certificates.get()
        let verify = verifyClients ? "\n  ca_file: \"\(files.ca)\"\n  verify: true" : ""
        let config = """
            tls {
              cert_file: "\(files.serverCertificate)"
              key_file: "\(files.serverKey)"
              timeout: 2\(verify)
            }
            """
        return (try NATSTestServer(config: config), files)
    }

    /// A connection that makes one attempt; its errors and its end.
    static func failingConnection(_ options: NATSOptions) async -> (errors: [NATSError], state: NATSConnectionState) {
        var options = options
        options.reconnect = NATSReconnectPolicy(initialDelay: .milliseconds(5), maximumAttempts: 1)
        let nats = NATSConnection(options)
        defer { nats.close() }
        let errors = Recorder<NATSError>()
        let handle = nats.errors.start(next: { errors.append($0) })
        defer { handle.dispose() }
        _ = await eventually { if case .closed = nats.currentState { true } else { false } }
        return (errors.all, nats.currentState)
    }

    @Test func messagesGoThroughTLS() async throws {
        let (server, files) = try Self.server()
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) { $0.tls = NATSTLS(trustRootsFile: files.ca) }
        defer { nats.close() }
        let received = Recorder<String>()
        let handle = nats.messages("secure.>").start(next: { received.append("\($0.subject) \($0.text)") })
        try await nats.flush()
        try nats.publish("secure.a", payload: Array("one".utf8))
        try nats.publish("secure.b", payload: Array("two".utf8), headers: ["K": "v"])
        #expect(await eventually { received.count == 2 })
        #expect(received.all == ["secure.a one", "secure.b two"])
        handle.dispose()
    }

    @Test func aClientWithoutTLSIsRefusedWithATypedError() async throws {
        let (server, _) = try Self.server()
        defer { server.stop() }
        let (errors, state) = await Self.failingConnection(NATSOptions(servers: [server.url]))
        #expect(errors == [.tlsRequired])
        #expect(state == .closed(.gaveUp(attempts: 1, lastError: "tlsRequired")))
    }

    @Test func aServerCertificateFromAnotherCAIsATLSError() async throws {
        let (server, files) = try Self.server()
        defer { server.stop() }
        let (errors, state) = await Self.failingConnection(
            NATSOptions(servers: [server.url], tls: NATSTLS(trustRootsFile: files.otherCA)))
        #expect(errors.count == 1)
        guard case .tls(let description) = errors.first else {
            Issue.record("errors \(errors)")
            return
        }
        #expect(description.contains("CERTIFICATE_VERIFY_FAILED"), "\(description)")
        guard case .closed(.gaveUp(attempts: 1, _)) = state else {
            Issue.record("state \(state)")
            return
        }
    }

    @Test func aServerWithoutTLSIsRefusedByAClientThatRequiresIt() async throws {
        let server = try NATSTestServer()
        defer { server.stop() }
        let files = try Self.certificates.get()
        let (errors, _) = await Self.failingConnection(NATSOptions(servers: [server.url], tls: NATSTLS(trustRootsFile: files.ca)))
        #expect(errors == [.tls("the server at 127.0.0.1 offers no TLS")])
    }

    @Test func aServerThatVerifiesClientsTakesTheClientCertificate() async throws {
        let (server, files) = try Self.server(verifyClients: true)
        defer { server.stop() }
        let nats = try await NATSConnection.connected(to: server) {
            $0.tls = NATSTLS(
                trustRootsFile: files.ca, certificateChainFile: files.clientCertificate, privateKeyFile: files.clientKey)
        }
        defer { nats.close() }
        let received = Recorder<String>()
        let handle = nats.messages("mutual").start(next: { received.append($0.text) })
        try await nats.flush()
        try nats.publish("mutual", payload: Array("hello".utf8))
        #expect(await eventually { received.count == 1 })
        handle.dispose()
        // Without a client certificate: refused.
        let (errors, _) = await Self.failingConnection(NATSOptions(servers: [server.url], tls: NATSTLS(trustRootsFile: files.ca)))
        #expect(errors.count == 1)
        guard case .tls = errors.first else {
            Issue.record("errors \(errors)")
            return
        }
    }

    @Test func certificateFilesThatDoNotLoadAreATLSError() async throws {
        let (server, _) = try Self.server()
        defer { server.stop() }
        let (errors, _) = await Self.failingConnection(
            NATSOptions(servers: [server.url], tls: NATSTLS(trustRootsFile: "/nonexistent/ca.pem")))
        #expect(errors.count == 1)
        guard case .tls(let description) = errors.first else {
            Issue.record("errors \(errors)")
            return
        }
        #expect(description.hasPrefix("cannot set up TLS"), "\(description)")
    }
}
#endif
