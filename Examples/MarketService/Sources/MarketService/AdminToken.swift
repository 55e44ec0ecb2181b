// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Hummingbird

/// Answers 401 to a request without `Authorization: Bearer <token>` (the
/// admin endpoints'); passes everything when there is no token.
struct AdminTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let token: String?

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response
    {
        guard let token else { return try await next(request, context) }
        guard let header = request.headers[.authorization], Self.matches(header, "Bearer " + token) else {
            throw HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: "a bearer token is required")
        }
        return try await next(request, context)
    }

    /// Compares in time that depends on the lengths only, not on where the
    /// strings differ.
    static func matches(_ given: String, _ expected: String) -> Bool {
        let given = Array(given.utf8)
        let expected = Array(expected.utf8)
        var difference = UInt8(given.count == expected.count ? 0 : 1)
        for index in 0..<max(given.count, expected.count) {
            let a = index < given.count ? given[index] : 0
            let b = index < expected.count ? expected[index] : 0
            difference |= a ^ b
        }
        return difference == 0
    }
}
