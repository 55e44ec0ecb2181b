// This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).

import Foundation
import SignalKit
import SignalKitInspector
import SignalKitTesting
import Testing

// SignalKitInspector: the paths it answers, the JSON it serves for a small
// graph (exact numbers), and the page's hooks. The page itself is drawn by
// headless Chromium in scripts/test's example stage
// (scripts/inspector-browser-check).

@Suite struct SignalInspectorTests {
    @Test func answersItsTwoPathsOnly() throws {
        let page = try #require(SignalInspector.response(path: "/inspector"))
        #expect(page.status == 200)
        #expect(page.contentType == "text/html; charset=utf-8")
        #expect(page.body == SignalInspector.page)
        #expect(page.headers.contains { $0.name == "Content-Security-Policy" && $0.value.contains("connect-src 'self'") })
        #expect(page.headers.contains { $0 == ("Cache-Control", "no-store") })

        let json = try #require(SignalInspector.response(path: "/inspector.json?t=1"))
        #expect(json.status == 200)
        #expect(json.contentType == "application/json")
        #expect(!json.headers.contains { $0.name == "Content-Security-Policy" })

        #expect(SignalInspector.response(path: "/inspector/") == nil)
        #expect(SignalInspector.response(path: "/inspectors") == nil)
        #expect(SignalInspector.response(path: "/") == nil)
        #expect(SignalInspector.response(path: "/admin/graph", mountedAt: "/admin/graph")?.status == 200)

        let post = try #require(SignalInspector.response(method: "POST", path: "/inspector.json"))
        #expect(post.status == 405)
        #expect(post.headers.contains { $0 == ("Allow", "GET, HEAD") })
        #expect(SignalInspector.response(method: "HEAD", path: "/inspector")?.body == [])
    }

    /// The page is self-contained: no external script, style, font or image,
    /// and it carries the hooks the browser test reads.
    @Test func thePageLoadsNothingFromTheNetwork() {
        let html = String(decoding: SignalInspector.page, as: UTF8.self)
        #expect(html.hasPrefix("<!DOCTYPE html>") || html.hasPrefix("<!doctype html>"))
        for external in ["src=\"http", "href=\"http", "@import", "url(http", "<link "] {
            #expect(!html.contains(external), "\(external)")
        }
        for hook in ["id=\"graph\"", "data-draws", "\"node\"", "\"edge\"", "inspector.json"] {
            #expect(html.contains(hook), "\(hook)")
        }
    }

    /// The served JSON of a small graph, decoded: exact numbers and edges.
    @Test func theJSONOfASmallGraph() throws {
        let pipe = ValuePipe<Int>()
        let prefix = "inspector.json."
        let graph = SignalKitDebug.withInspection {
            pipe.signal() |> named(prefix + "prices") |> filter { $0 > 0 } |> named(prefix + "positive")
        }
        let handle = graph.start()
        for value in [3, -1, 4] { pipe.putNext(value) }
        let body = try #require(SignalInspector.response(path: "/inspector.json")).body
        let snapshot = try JSONDecoder().decode(SignalGraphSnapshot.self, from: Data(body))
        let prices = try #require(snapshot.stage(named: prefix + "prices"))
        let positive = try #require(snapshot.stage(named: prefix + "positive"))
        #expect(prices.values == 3)
        #expect(positive.values == 2)
        #expect(prices.liveSubscriptions == 1 && positive.liveSubscriptions == 1)
        #expect(snapshot.edges.contains(.init(from: prices.id, to: positive.id)))
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("\"liveSubscriptions\":1"))
        handle.dispose()
    }
}
