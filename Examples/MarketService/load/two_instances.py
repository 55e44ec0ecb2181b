#!/usr/bin/env python3
# This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
"""Runs market-server as two instances and checks what joins them (loopback only).

Instance A runs the feed and serves it over gRPC; instance B takes its ticks
from A through a TCP proxy this script runs (so that it can cut B's gRPC
connection); both share the instrument list through PostgreSQL.

Checks, in order:
  1. a WebSocket client of B receives ticks, and they were produced on A (B
     runs no feed; A's snapshot is at least as far along); A serves one call
     per instrument B's clients watch, shared by all of them; the client's
     WebSocket span on B, B's call to A and A's served subscription are one
     trace (both instances record their spans in memory: `--tracing memory`,
     `GET /traces`);
  2. the proxy cuts every connection between B and A: B counts failed calls,
     reconnects through the proxy, and the same WebSocket (never closed)
     receives ticks A produced after the cut;
  3. delisting an instrument on A reaches B through PostgreSQL (B's
     /instruments shows it, B refuses a WebSocket asking for it); listing it
     again on B reaches A;
  4. hostile input: the admin endpoints refuse a request without the bearer
     token (401); a WebSocket naming an instrument twice, or more than the
     cap, is closed with 1008 and the rule as its reason;
  5. chaos: a partition between B and A longer than B's reconnection backoff
     cap (the proxy refuses connections for 2.5 s; the cap is 1 s): the same
     WebSocket resumes with ticks produced after it, never going back, and
     the gap is reported; A restarted (SIGTERM, then a new process on the
     same ports): B's client keeps its WebSocket and gets ticks from the new
     process; PostgreSQL killed with SIGKILL and restarted (with
     --postgres-restart): a change committed after the restart reaches B, at
     a new listening epoch;
  6. stopping B (SIGTERM) disposes A's served calls within 1 s; both
     instances stop gracefully with every SignalKit live-object counter at
     zero.

Prints one JSON line with the measured times; exits 1 if a check failed.

Usage: two_instances.py --server PATH --postgres postgres://USER@HOST:PORT/DATABASE [--postgres-restart SCRIPT]
Needs the `websockets` package (PyPI).
"""
import argparse
import asyncio
import json
import os
import signal
import socket
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.request

import websockets

INSTRUMENTS = 20
WATCHED = [3, 7]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ADMIN_TOKEN = "two-instances-token"


def http(port, path, method="GET", token=ADMIN_TOKEN):
    """The response body; a POST carries the admin token unless `token` is None."""
    headers = {"Authorization": f"Bearer {token}"} if method == "POST" and token is not None else {}
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=b"" if method == "POST" else None, method=method, headers=headers
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        return response.read().decode().strip()


def http_status(port, path, method="GET", token=ADMIN_TOKEN):
    try:
        http(port, path, method, token)
        return 200
    except urllib.error.HTTPError as error:
        return error.code


def fields(text):
    return dict(item.split("=", 1) for item in text.split())


def stats(port):
    return fields(http(port, "/stats"))


def parse_update(text):
    """{instrument: (sequence, timestamp)} of one WebSocket update."""
    ticks = {}
    for entry in text.split():
        instrument, sequence, _price, timestamp = entry.split(":")
        ticks[int(instrument)] = (int(sequence), int(timestamp))
    return ticks


class Proxy:
    """A TCP proxy to 127.0.0.1:target whose connections `cut()` aborts."""

    def __init__(self, target):
        self.target = target
        self.transports = set()
        self.accepted = 0
        self.refusing_until = 0.0

    async def start(self):
        self.server = await asyncio.start_server(self.handle, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def handle(self, reader, writer):
        if time.monotonic() < self.refusing_until:
            writer.transport.abort()
            return
        self.accepted += 1
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.transport.abort()
            return
        pair = {writer.transport, upstream_writer.transport}
        self.transports |= pair

        async def pipe(source, sink):
            try:
                while data := await source.read(65536):
                    sink.write(data)
                    await sink.drain()
            except (ConnectionError, asyncio.CancelledError):
                pass
            finally:
                sink.transport.abort()

        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer))
        self.transports -= pair

    def cut(self):
        for transport in list(self.transports):
            transport.abort()

    def partition(self, seconds):
        """Cuts every connection and refuses new ones for `seconds`."""
        self.refusing_until = time.monotonic() + seconds
        self.cut()

    def close(self):
        self.cut()
        self.server.close()


async def wait_until(predicate, timeout, what):
    deadline = time.monotonic() + timeout
    while True:
        value = await asyncio.to_thread(predicate)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.02)


async def start_instance(server, arguments, log_path, http_port):
    log = open(log_path, "w")
    process = await asyncio.create_subprocess_exec(server, *arguments, stdout=log, stderr=log)

    def ready():
        if process.returncode is not None:
            raise AssertionError(f"{' '.join(arguments)} exited at start: {open(log_path).read()[-2000:]}")
        try:
            return stats(http_port)
        except OSError:
            return None

    await wait_until(ready, 30, f"instance on port {http_port} answers /stats")
    return process


def crash_excerpt(log):
    """The part of a log that says why the process died: from the first fatal
    error or crash report (the message, the crashed thread's frames), else the
    log's end. CI keeps only what is printed."""
    starts = [log.find(marker) for marker in ("Fatal error", "💣", "Program crashed", "Crashed:")]
    starts = [start for start in starts if start >= 0]
    if not starts:
        return log[-2000:]
    start = min(starts)
    return log[max(0, start - 500):start + 6000]


async def stop_instance(process, log_path, name):
    process.send_signal(signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), 20)
    except asyncio.TimeoutError:
        process.kill()
        raise AssertionError(f"{name} did not stop within 20 s of SIGTERM")
    log = open(log_path).read()
    if process.returncode != 0:
        raise AssertionError(f"{name} exited with status {process.returncode}: {crash_excerpt(log)}")
    if "liveSubscriptions=0 liveBags=0 liveBagArrays=0 retiredBagItems=0" not in log:
        raise AssertionError(f"{name}: SignalKit's live-object counters are not back to zero: {log[-2000:]}")


async def next_update(connection, timeout=5):
    return parse_update(await asyncio.wait_for(connection.recv(), timeout))


def spans(port):
    """The instance's spans: (traceID, spanID, parentSpanID or None, operation, state) per line of /traces."""
    result = []
    for line in http(port, "/traces").splitlines():
        trace, span, parent, operation, state = line.split()
        result.append((trace, span, None if parent == "-" else parent, operation, state))
    return result


async def check_trace(a_http, b_http):
    """Each of B's upstream calls is a child of the WebSocket span of the client that started it, and
    each subscription A serves is a child of one of those calls, in the same trace."""
    b_spans, a_spans = await asyncio.to_thread(spans, b_http), await asyncio.to_thread(spans, a_http)
    sockets = {s[1]: s for s in b_spans if s[3] == "market.websocket" and s[4] == "active"}
    calls = {s[1]: s for s in b_spans if s[3] == "market.ticks.call" and s[4] == "active"}
    served = [s for s in a_spans if s[3] == "market.ticks.serve" and s[4] == "active"]
    assert len(sockets) == 2, f"B has {len(sockets)} active WebSocket spans, expected 2: {b_spans}"
    assert len(calls) == len(WATCHED), f"B has {len(calls)} active call spans, expected {len(WATCHED)}: {b_spans}"
    assert len(served) == len(WATCHED), f"A has {len(served)} active served spans, expected {len(WATCHED)}: {a_spans}"
    for call in calls.values():
        socket = sockets.get(call[2])
        assert socket is not None, f"B's call span {call} is not a child of a WebSocket span {list(sockets.values())}"
        assert call[0] == socket[0], f"B's call span {call} is not in its WebSocket's trace {socket}"
    for serve in served:
        call = calls.get(serve[2])
        assert call is not None, f"A's served span {serve} is not a child of one of B's calls {list(calls.values())}"
        assert serve[0] == call[0], f"A's served span {serve} is not in its call's trace {call}"
    return f"{len(served)} served subscriptions on A in their B WebSocket's trace"


async def check_tls(grpc_port, tls_dir):
    """A's gRPC port speaks TLS with the generated certificate (verified against it, ALPN h2),
    and a plaintext HTTP/2 client gets no answer from it."""
    process = await asyncio.create_subprocess_exec(
        "openssl", "s_client", "-connect", f"127.0.0.1:{grpc_port}", "-CAfile", os.path.join(tls_dir, "cert.pem"),
        "-verify_return_error", "-alpn", "h2", stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )
    output = (await asyncio.wait_for(process.communicate(), 10))[0].decode(errors="replace")
    assert process.returncode == 0 and "Verify return code: 0 (ok)" in output, f"TLS handshake with A failed:\n{output[-800:]}"
    assert "ALPN protocol: h2" in output, f"A did not negotiate h2 over TLS:\n{output[-800:]}"
    # The HTTP/2 client preface in plaintext: a TLS server answers with an alert or closes.
    reader, writer = await asyncio.open_connection("127.0.0.1", grpc_port)
    writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0]))
    await writer.drain()
    try:
        answer = await asyncio.wait_for(reader.read(64), 5)
    except (ConnectionError, asyncio.TimeoutError):
        answer = b""
    writer.close()
    # A plaintext HTTP/2 server answers with its SETTINGS frame (type 4 in the frame header's fourth byte).
    assert not (len(answer) >= 9 and answer[3] == 4), f"A answered a plaintext HTTP/2 preface: {answer!r}"
    return "A's gRPC verified over TLS (h2); a plaintext HTTP/2 client is refused"


async def run(options, work):
    a_http, a_grpc, b_http = free_port(), free_port(), free_port()
    proxy = Proxy(a_grpc)
    await proxy.start()
    common = [
        "--instruments", str(INSTRUMENTS), "--rate-limit-ms", "20", "--postgres", options.postgres, "--tracing", "memory",
        "--admin-token", ADMIN_TOKEN,
    ]
    # TLS between the instances: A serves gRPC with the certificate the
    # caller generated, B trusts exactly that certificate. The proxy relays
    # the encrypted bytes.
    a_tls, b_tls = [], []
    if options.tls_dir:
        certificate, key = os.path.join(options.tls_dir, "cert.pem"), os.path.join(options.tls_dir, "key.pem")
        a_tls, b_tls = ["--grpc-tls", f"{certificate},{key}"], ["--upstream-ca", certificate]
    a_arguments = ["--port", str(a_http), "--grpc-port", str(a_grpc), "--rate", "2000"] + a_tls + common
    a_log, b_log = os.path.join(work, "a.log"), os.path.join(work, "b.log")
    a = await start_instance(options.server, a_arguments, a_log, a_http)
    b = None
    results = {}
    try:
        b = await start_instance(
            options.server, ["--port", str(b_http), "--upstream", f"127.0.0.1:{proxy.port}"] + b_tls + common, b_log, b_http
        )
        if options.tls_dir:
            results["tls"] = await check_tls(a_grpc, options.tls_dir)
        # Earlier runs against the same database may have left it delisted.
        await asyncio.to_thread(http, a_http, "/instruments/5/list", "POST")
        await wait_until(lambda: fields(http(b_http, "/instruments"))["delisted"] == "", 5, "B lists instrument 5")

        # 1. A tick produced on A reaches a WebSocket client on B.
        started = time.monotonic()
        url = f"ws://127.0.0.1:{b_http}/ws?instruments=3,7"
        async with websockets.connect(url) as client, websockets.connect(url) as second:
            update = await next_update(client)
            results["first_update_ms"] = round((time.monotonic() - started) * 1000, 1)
            assert sorted(update) == [3, 7], f"B sent instruments {sorted(update)}, asked for 3 and 7"
            await next_update(second)
            snapshot = parse_update(await asyncio.to_thread(http, a_http, "/snapshot/3"))
            assert update[3][0] <= snapshot[3][0], f"B delivered sequence {update[3][0]}, A's snapshot is at {snapshot[3][0]}"
            a_stats, b_stats = await asyncio.to_thread(stats, a_http), await asyncio.to_thread(stats, b_http)
            assert int(a_stats["servedCalls"]) == len(WATCHED), (
                f"A serves {a_stats['servedCalls']} calls, expected one per watched instrument"
            )
            assert int(b_stats["clients"]) == 2, f"B has {b_stats['clients']} clients"
            results["trace"] = await check_trace(a_http, b_http)

            # 2. Cutting B's gRPC connection: B reconnects, the client goes on.
            failures = int(b_stats["upstreamFailures"])
            accepted = proxy.accepted
            last = (await next_update(client))[3][0]
            # Updates already on their way carry ticks from before the cut,
            # at most A's snapshot taken after it.
            cut_at = time.monotonic()
            proxy.cut()
            after_cut = parse_update(await asyncio.to_thread(http, a_http, "/snapshot/3"))[3][0]
            await wait_until(
                lambda: int(stats(b_http)["upstreamFailures"]) > failures, 5, "B sees its upstream calls fail"
            )
            while True:
                update = await next_update(client, timeout=10)
                assert update[3][0] >= last, f"instrument 3 went back from {last} to {update[3][0]}"
                last = update[3][0]
                if last > after_cut:
                    break
            results["reconnect_to_fresh_tick_ms"] = round((time.monotonic() - cut_at) * 1000, 1)
            assert proxy.accepted > accepted, "B did not reconnect through the proxy"
            results["upstream_failures"] = int(stats(b_http)["upstreamFailures"]) - failures
            await wait_until(
                lambda: int(stats(a_http)["servedCalls"]) == len(WATCHED), 5, "A serves one call per watched instrument again"
            )

        # 3. The instrument list, shared through PostgreSQL.
        changed_at = time.monotonic()
        assert await asyncio.to_thread(http, a_http, "/instruments/5/delist", "POST") == "changed"
        await wait_until(lambda: fields(http(b_http, "/instruments"))["delisted"] == "5", 5, "B sees instrument 5 delisted")
        results["delist_a_to_b_ms"] = round((time.monotonic() - changed_at) * 1000, 1)
        try:
            async with websockets.connect(f"ws://127.0.0.1:{b_http}/ws?instruments=5"):
                raise AssertionError("B accepted a WebSocket for a delisted instrument")
        except websockets.exceptions.InvalidHandshake:
            pass
        assert await asyncio.to_thread(http, b_http, "/instruments/5/delist", "POST") == "unchanged"
        changed_at = time.monotonic()
        assert await asyncio.to_thread(http, b_http, "/instruments/5/list", "POST") == "changed"
        await wait_until(lambda: fields(http(a_http, "/instruments"))["delisted"] == "", 5, "A sees instrument 5 listed")
        results["list_b_to_a_ms"] = round((time.monotonic() - changed_at) * 1000, 1)
        assert int(stats(b_http)["listingEpoch"]) >= 1, "B's instrument-list feed never listened"

        # 4. Hostile input.
        assert await asyncio.to_thread(http_status, b_http, "/instruments/5/delist", "POST", None) == 401
        assert await asyncio.to_thread(http_status, b_http, "/instruments/5/delist", "POST", "wrong") == 401
        assert await asyncio.to_thread(http_status, b_http, "/latency/reset", "POST", None) == 401
        assert fields(await asyncio.to_thread(http, b_http, "/instruments"))["delisted"] == "", "a refused POST changed the list"
        for query, reason in [
            ("1,1", "an instrument is named twice"),
            (",".join(str(i % INSTRUMENTS) for i in range(65)), "at most 64 instruments per connection, asked for 65"),
        ]:
            async with websockets.connect(f"ws://127.0.0.1:{b_http}/ws?instruments={query}") as refused:
                try:
                    await asyncio.wait_for(refused.recv(), 5)
                    raise AssertionError(f"B sent an update to a refused WebSocket ({query[:20]})")
                except websockets.exceptions.ConnectionClosed as closed:
                    assert closed.rcvd is not None and closed.rcvd.code == 1008, f"close {closed.rcvd} for {query[:20]}"
                    assert closed.rcvd.reason == reason, f"close reason {closed.rcvd.reason!r}, expected {reason!r}"
        results["hostile_input"] = "401 without the token; 1008 for a repeat and for 65 instruments"

        # 5. Chaos.
        async with websockets.connect(f"ws://127.0.0.1:{b_http}/ws?instruments=3") as client:
            last = (await next_update(client))[3][0]
            # A partition longer than B's backoff cap (1 s).
            before = parse_update(await asyncio.to_thread(http, a_http, "/snapshot/3"))[3][0]
            partitioned_at = time.monotonic()
            proxy.partition(2.5)
            await asyncio.sleep(2.5)
            healed_at = time.monotonic()
            while True:
                update = await next_update(client, timeout=10)
                assert update[3][0] >= last, f"instrument 3 went back from {last} to {update[3][0]}"
                if update[3][0] > before and time.monotonic() > healed_at:
                    gap = update[3][0] - last
                    last = update[3][0]
                    break
                last = update[3][0]
            results["partition_2500ms_recovery_after_heal_ms"] = round((time.monotonic() - healed_at) * 1000, 1)
            results["partition_gap_ticks"] = gap
            assert time.monotonic() - partitioned_at < 10, "B took over 7 s to recover from the partition"

            # A restarted: a new process, the same ports.
            await stop_instance(a, a_log, "instance A")
            a = None
            stopped_ns = time.monotonic_ns()
            a_log += ".restarted"
            a = await start_instance(options.server, a_arguments, a_log, a_http)
            while True:
                update = await next_update(client, timeout=15)
                if update[3][1] > stopped_ns:
                    break
            results["a_restart_to_fresh_tick_ms"] = round((time.monotonic_ns() - stopped_ns) / 1e6, 1)
            await wait_until(
                lambda: int(stats(a_http)["servedCalls"]) >= 1, 5, "the new A serves B's call"
            )

        if options.postgres_restart:
            # PostgreSQL killed (SIGKILL) and restarted under the running feed.
            epoch = int(stats(b_http)["listingEpoch"])
            killed_at = time.monotonic()
            restart = await asyncio.create_subprocess_exec(options.postgres_restart)
            assert await restart.wait() == 0, "the PostgreSQL restart script failed"

            def delisted():
                try:
                    return http(a_http, "/instruments/6/delist", "POST") in ("changed", "unchanged")
                except (urllib.error.URLError, OSError):
                    return False

            await wait_until(delisted, 20, "A commits a change once PostgreSQL is back")
            await wait_until(
                lambda: fields(http(b_http, "/instruments"))["delisted"] == "6", 20, "B sees the change made after the restart"
            )
            await wait_until(lambda: int(stats(b_http)["listingEpoch"]) > epoch, 20, "B listens again at a new epoch")
            results["postgres_kill_to_change_seen_ms"] = round((time.monotonic() - killed_at) * 1000, 1)
            results["listing_epoch_after_restart"] = int(stats(b_http)["listingEpoch"])
            assert await asyncio.to_thread(http, a_http, "/instruments/6/list", "POST") == "changed"
            await wait_until(lambda: fields(http(b_http, "/instruments"))["delisted"] == "", 10, "B sees 6 listed again")

        # 6. Stopping B ends A's calls; both stop cleanly.
        stopping = time.monotonic()
        await stop_instance(b, b_log, "instance B")
        b = None
        await wait_until(lambda: int(stats(a_http)["servedCalls"]) == 0, 1, "A disposes B's calls within 1 s of B stopping")
        results["a_calls_ended_after_b_stop_ms"] = round((time.monotonic() - stopping) * 1000, 1)
        await stop_instance(a, a_log, "instance A")
        a = None
    finally:
        for process in (b, a):
            if process is not None and process.returncode is None:
                process.kill()
                await process.wait()
        proxy.close()
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--server", required=True, help="the market-server binary")
    parser.add_argument("--postgres", required=True, help="postgres://USER@HOST:PORT/DATABASE")
    parser.add_argument(
        "--postgres-restart", help="a script that kills the PostgreSQL server with SIGKILL and starts it again"
    )
    parser.add_argument("--tls-dir", help="a folder with cert.pem and key.pem: the instances talk gRPC over TLS")
    run_check(run, parser.parse_args())


def run_check(run, options, seconds=170):
    """Runs `run(options, work)` in a temporary folder within `seconds` and prints its results as
    one JSON line; on a failed check or a timeout, prints the last lines of every instance's log
    (the `*.log` files in the folder) and the failure, and exits 1."""
    with tempfile.TemporaryDirectory() as work:
        try:
            results = asyncio.run(asyncio.wait_for(run(options, work), seconds))
        except (AssertionError, asyncio.TimeoutError) as failure:
            for name in sorted(os.listdir(work)):
                path = os.path.join(work, name)
                if ".log" in name and os.path.isfile(path):
                    print(f"--- {name} (last lines)", file=sys.stderr)
                    print("".join(open(path).readlines()[-20:]), file=sys.stderr)
            print(traceback.format_exc(), file=sys.stderr)
            print(f"FAILED: {failure or 'timed out'}", file=sys.stderr)
            sys.exit(1)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
