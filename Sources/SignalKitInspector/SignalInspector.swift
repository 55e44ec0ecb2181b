// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
public import SignalKit

/// The live view of a service's signal graphs: SignalKit's inspection
/// snapshot as JSON, and a self-contained page that draws it.
///
/// Switch inspection on (``SignalKit/SignalKitDebug/isInspecting``, or the
/// environment variable `SIGNALKIT_INSPECT=1`) before the signals to see are
/// named, then answer two paths of an HTTP server from ``response(method:path:mountedAt:)``:
/// the page at `mount` (`/inspector`) and the snapshot at `mount.json`
/// (`/inspector.json`), which the page fetches every second.
///
/// With Hummingbird (a few lines, in the service's router):
///
/// ```swift
/// // not compiled: needs Hummingbird
/// router.get("inspector") { _, _ in Response(SignalInspector.response(path: "/inspector")!) }
/// router.get("inspector.json") { _, _ in Response(SignalInspector.response(path: "/inspector.json")!) }
/// ```
///
/// With a plain SwiftNIO HTTP server: ``SignalInspectorHTTPHandler`` (the
/// `Inspector` trait).
///
/// The snapshot names every named signal and where it was named: serve it
/// only where operators reach it (an admin port, behind authentication).
public enum SignalInspector {
    /// Where the page is served unless told otherwise.
    public static let defaultMount = "/inspector"

    /// The page: HTML, CSS, JavaScript and SVG in one file, no network access
    /// but the snapshot it fetches.
    public static var page: [UInt8] { PackageResources.inspector_html }

    /// `snapshot` as JSON (keys sorted).
    public static func json(_ snapshot: SignalGraphSnapshot = SignalKitDebug.inspectionSnapshot()) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Encoding plain numbers, strings and arrays cannot fail.
        return (try? Array(encoder.encode(snapshot))) ?? Array("{}".utf8)
    }

    /// The answer to a request for `path` (its query, if any, ignored), or
    /// nil if `path` is not the page's or the snapshot's: `mount` gives the
    /// page, `mount.json` a fresh snapshot; a method other than `GET` or
    /// `HEAD` on them gives 405.
    public static func response(
        method: String = "GET",
        path: String,
        mountedAt mount: String = defaultMount
    ) -> SignalInspectorResponse? {
        let bare = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let isPage = bare == mount
        guard isPage || bare == mount + ".json" else { return nil }
        guard method == "GET" || method == "HEAD" else {
            return SignalInspectorResponse(
                status: 405, contentType: "text/plain; charset=utf-8", body: Array("GET or HEAD only\n".utf8),
                extraHeaders: [("Allow", "GET, HEAD")])
        }
        let body = isPage ? page : json()
        return SignalInspectorResponse(
            status: 200,
            contentType: isPage ? "text/html; charset=utf-8" : "application/json",
            body: method == "HEAD" ? [] : body,
            extraHeaders: isPage ? [("Content-Security-Policy", pagePolicy)] : [])
    }

    /// The page loads nothing but its own snapshot.
    static let pagePolicy =
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:"
}

/// An HTTP answer from ``SignalInspector/response(method:path:mountedAt:)``,
/// for any server to send.
public struct SignalInspectorResponse: Sendable {
    /// 200, or 405 for a method other than GET and HEAD.
    public var status: Int
    /// `Content-Type`.
    public var contentType: String
    /// The body (empty for HEAD).
    public var body: [UInt8]
    /// Every header to send: `Content-Type`, `Cache-Control: no-store`,
    /// `X-Content-Type-Options: nosniff`, and for the page its
    /// `Content-Security-Policy` (no network but the snapshot).
    public var headers: [(name: String, value: String)]

    init(status: Int, contentType: String, body: [UInt8], extraHeaders: [(String, String)]) {
        self.status = status
        self.contentType = contentType
        self.body = body
        headers =
            [("Content-Type", contentType), ("Cache-Control", "no-store"), ("X-Content-Type-Options", "nosniff")]
            + extraHeaders.map { (name: $0.0, value: $0.1) }
    }
}
