// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if NATS
import NIOCore
import NIOSSL

/// A connection's TLS settings (``NATSOptions/tls``), as PEM files.
///
/// With TLS set, the client upgrades every connection to TLS after the
/// server's `INFO` (NATS's flow: `INFO` in plain text, then the client's TLS
/// handshake, then `CONNECT`), and refuses a server that offers no TLS with
/// ``NATSError/tls(_:)``. Without it, a server whose `INFO` says
/// `tls_required` is refused with ``NATSError/tlsRequired``. A failed
/// handshake (an untrusted certificate, a name that does not match) is
/// ``NATSError/tls(_:)``. Each of these is sent on
/// ``NATSConnection/errors`` and counts as a failed attempt of the
/// reconnect policy.
public struct NATSTLS: Sendable, Equatable {
    /// The certificate authorities (PEM) the server's certificate must
    /// chain to; nil trusts the system's roots.
    public var trustRootsFile: String?
    /// The client's certificate chain (PEM), for a server that verifies
    /// clients (`verify: true`); with ``privateKeyFile``.
    public var certificateChainFile: String?
    /// The private key (PEM) of ``certificateChainFile``.
    public var privateKeyFile: String?
    /// The name the server's certificate must carry (and the SNI name);
    /// nil takes the server address's host (an IP address is matched
    /// against the certificate's IP addresses).
    public var serverName: String?
    /// Whether the server's certificate is verified (its chain and name).
    /// Turning it off makes the connection open to anyone in the middle.
    public var verifiesServer: Bool

    public init(
        trustRootsFile: String? = nil,
        certificateChainFile: String? = nil,
        privateKeyFile: String? = nil,
        serverName: String? = nil,
        verifiesServer: Bool = true
    ) {
        self.trustRootsFile = trustRootsFile
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.serverName = serverName
        self.verifiesServer = verifiesServer
    }

    /// The client handler of a TLS session with `host`.
    func makeHandler(host: String) throws(NATSError) -> NIOSSLClientHandler {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verifiesServer ? .fullVerification : .none
        do {
            // Every file is loaded before the context is made: a
            // `NIOSSLContext` whose initializer throws (a trust roots file
            // that does not load, given as `.file`) leaks its BoringSSL
            // context, about 2.5 KB, on every reconnect attempt.
            if let trustRootsFile {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(trustRootsFile))
            }
            if let certificateChainFile {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateChainFile).map { .certificate($0) }
            }
            if let privateKeyFile {
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: privateKeyFile, format: .pem))
            }
            let context = try NIOSSLContext(configuration: configuration)
            // SNI takes no IP address; NIOSSL then matches the peer's address.
            let name = serverName ?? host
            return try NIOSSLClientHandler(context: context, serverHostname: Self.isIPAddress(name) ? nil : name)
        } catch {
            throw .tls("cannot set up TLS: \(error)")
        }
    }

    private static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host, port: 0)) != nil
    }
}
#endif  // NATS
