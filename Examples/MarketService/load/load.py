#!/usr/bin/env python3
# This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
"""Load client and checker for market-server (loopback only).

Connects CLIENTS WebSocket clients, each to PER_CLIENT instruments, waits
WARMUP seconds, measures for DURATION seconds, then drops half of them
abruptly (the socket is aborted, no closing handshake) and checks that the
server's live subscriptions fall to the remaining clients' within 1 s; then
closes the rest.

Checks, per client: every update has exactly its instruments, in the order it
asked; each instrument's sequence numbers never go back; the gap between two
updates is at most the rate limit plus TOLERANCE_MS (while the feed runs, an
instrument of 100 ticking at 10,000/s changes every 10 ms, so every window
has something to send). Measures the tick-to-client latency (receive time
minus the newest tick's feed timestamp, both CLOCK_MONOTONIC) and the
updates received per second. Around its measuring window it resets and then
reads the server's own latency by stage (`POST /latency/reset`,
`GET /latency`: tick age when the rate limit sends an update, before and
after the WebSocket write, the hand-off between the two, how late windows
end), reported as "server_latency_us".

With --slow-fraction F (scripts/test passes 0.1), a second phase follows the
measuring window: that fraction of the clients (every 1/F-th) starts reading
--slow-factor times slower than its updates come (one message per rate limit
times the factor, through a 4 KB receive buffer and a one-frame queue, so
that TCP's flow control reaches the server) for --slow-duration seconds.
Checks: the server counts the updates it drops for them (`clientDrops` in
`/stats`), keeps every slow client connected for the whole phase (a server
pinging more often closes them: its pong waits behind the unread updates),
its RSS grows by at most --rss-growth-limit-mb (read from /proc with
--server-pid), and the other clients keep their rate (the gap check, and
each receives an update for at least --min-update-share of the phase's
rate-limit windows) and are never closed. Their p99 latency with slow
clients is compared with their p99 without: the same clients are measured
for --duration seconds before the slow phase and again after it (the slow
clients reading at their rate again), and every phase is cut into
--window-seconds windows. The ratio is
the median of the slow phase's window p99s over the median of the windows
before and after it: bracketing the slow phase cancels the machine's drift,
and a median is not moved by the odd window in which a neighbour took the
cores. It is printed, with the p99s of the phases as wholes, and checked
against --p99-ratio-limit if one is given. The server's figures are read off
the event loop while clients are measured, and every measured phase starts
after a --warmup pause: a blocking request, or the previous phase's
percentiles being sorted, held every client's messages (it made the slow
phase's first window p99 32-80 ms where the others measured 6-8 ms). A ratio
above the limit is measured once more: a second slow phase and phase after
it, and the check takes the windows of both rounds (a server that slows the
others down does so in both; a neighbour that took the cores for part of the
first rarely takes them for the same part of the second).

Prints one JSON line with the figures; exits 1 if a check failed.

Needs the `websockets` package (PyPI).
"""
import argparse
import asyncio
import json
import random
import socket
import sys
import time
import urllib.request

import websockets


def stats(port, timeout=5):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=timeout) as response:
        return dict(item.split("=") for item in response.read().decode().split())


def try_stats(port):
    """The server's stats, or None if it does not answer within 0.5 s (overloaded)."""
    try:
        return stats(port, timeout=0.5)
    except Exception:
        return None


def server_latency(port, reset=False):
    """Resets (POST /latency/reset) or reads (GET /latency) the server's
    latency by stage; None if the server does not answer (not part of the
    checks)."""
    try:
        if reset:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/latency/reset", data=b"", method="POST")
        else:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/latency")
        with urllib.request.urlopen(request, timeout=5) as response:
            return None if reset else json.loads(response.read().decode())
    except Exception:
        return None


def percentile(sorted_values, fraction):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, int(fraction * len(sorted_values)))
    return sorted_values[index]


def rss_mb(pid, field="VmRSS"):
    """A process's resident set (or its peak, VmHWM), in MB; None without a pid."""
    if pid is None:
        return None
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return round(int(line.split()[1]) / 1024, 1)
    return None


class Client:
    def __init__(self, index, instruments, slow=False):
        self.index = index
        self.instruments = instruments
        # Reads one message per `read_delay` seconds once set (a slow client).
        self.slow = slow
        self.read_delay = 0.0
        self.last_sequence = {i: 0 for i in instruments}
        self.updates = 0
        self.latencies = []
        self.max_gap_ms = 0.0
        self.errors = []
        self.last_arrival = None
        self.connection = None
        self.measuring = True
        # Where this client's latencies also go, window by window, while a
        # phase is compared (None: nowhere).
        self.windows = None
        # When the connection ended (time.monotonic()), whoever ended it.
        self.closed_at = None

    def check(self, text, now_ns):
        entries = [entry.split(":") for entry in text.split(" ")]
        instruments = [int(entry[0]) for entry in entries]
        if instruments != self.instruments:
            self.errors.append(f"client {self.index}: instruments {instruments}, asked {self.instruments}")
            return
        newest = 0
        for instrument, sequence, _price, timestamp in entries:
            instrument, sequence, timestamp = int(instrument), int(sequence), int(timestamp)
            if sequence < self.last_sequence[instrument]:
                self.errors.append(
                    f"client {self.index}: instrument {instrument} went back from "
                    f"{self.last_sequence[instrument]} to {sequence}"
                )
            self.last_sequence[instrument] = sequence
            newest = max(newest, timestamp)
        if self.measuring:
            self.updates += 1
            self.latencies.append((now_ns - newest) / 1000.0)
            if self.windows is not None:
                self.windows.current.append(self.latencies[-1])
            if self.last_arrival is not None:
                self.max_gap_ms = max(self.max_gap_ms, (now_ns - self.last_arrival) / 1e6)
        self.last_arrival = now_ns

    async def run(self, port):
        path = ",".join(map(str, self.instruments))
        uri = f"ws://127.0.0.1:{port}/ws?instruments={path}"
        if self.slow:
            # A small receive buffer and a one-frame queue: when this client
            # reads slowly, the server's writes wait (TCP flow control)
            # instead of the kernel and the library buffering minutes of updates.
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setblocking(False)
            await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", port))
            # No keepalive pings: their pongs wait behind the unread updates.
            connecting = websockets.connect(uri, sock=sock, max_queue=1, ping_interval=None)
        else:
            connecting = websockets.connect(uri, max_queue=None)
        async with connecting as connection:
            self.connection = connection
            try:
                async for message in connection:
                    self.check(message, time.monotonic_ns())
                    if self.read_delay:
                        await asyncio.sleep(self.read_delay)
            except websockets.ConnectionClosed:
                pass
        self.closed_at = time.monotonic()


class Windows:
    """One phase's latency samples, cut into windows of equal length."""

    def __init__(self):
        self.current = []
        self.closed = []

    async def collect(self, seconds, window_seconds):
        """Cuts a window every `window_seconds` for `seconds` (a shorter
        last window is dropped: its p99 rests on fewer samples)."""
        count = max(1, int(seconds / window_seconds))
        for _ in range(count):
            self.current = []
            await asyncio.sleep(window_seconds)
            self.closed.append(self.current)
        self.current = []

    def p99s(self):
        return [percentile(sorted(window), 0.99) for window in self.closed if window]


def median(values):
    ordered = sorted(values)
    if not ordered:
        return None
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


async def calibrate(options, baseline):
    """The live subscriptions one client's graph holds (one probe client)."""
    probe = Client(-1, list(range(options.per_client)))
    task = asyncio.create_task(probe.run(options.port))
    deadline = time.monotonic() + 10
    while int(stats(options.port)["clients"]) < 1 or probe.updates == 0:
        if time.monotonic() > deadline:
            sys.exit("the probe client got no update in 10 s")
        await asyncio.sleep(0.02)
    per_client = int(stats(options.port)["liveSubscriptions"]) - baseline
    await probe.connection.close()
    await task
    deadline = time.monotonic() + 10
    while int(stats(options.port)["liveSubscriptions"]) != baseline:
        if time.monotonic() > deadline:
            sys.exit(f"after the probe client left, the server reported {stats(options.port)}; baseline {baseline}")
        await asyncio.sleep(0.02)
    return per_client


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--clients", type=int, default=500)
    parser.add_argument("--per-client", type=int, default=5)
    parser.add_argument("--instruments", type=int, default=100)
    parser.add_argument("--duration", type=float, default=10)
    parser.add_argument("--rate-limit-ms", type=float, default=50)
    parser.add_argument("--tolerance-ms", type=float, default=1000)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--slow-fraction", type=float, default=0.0)
    parser.add_argument("--slow-factor", type=float, default=10)
    parser.add_argument("--slow-duration", type=float, default=60)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--rss-growth-limit-mb", type=float, default=64)
    parser.add_argument("--window-seconds", type=float, default=2)
    # The share of the slow phase's rate-limit windows every other client
    # must receive an update for (a lost update, or a stall, lowers it).
    parser.add_argument("--min-update-share", type=float, default=0.98)
    # The median window p99 with slow clients over the median without (0:
    # report only).
    parser.add_argument("--p99-ratio-limit", type=float, default=0)
    options = parser.parse_args()

    generator = random.Random(42)
    slow_every = round(1 / options.slow_fraction) if options.slow_fraction > 0 else 0
    clients = [
        Client(
            index,
            generator.sample(range(options.instruments), options.per_client),
            slow=slow_every > 0 and index % slow_every == 0,
        )
        for index in range(options.clients)
    ]
    fast = [client for client in clients if not client.slow]
    baseline = int(stats(options.port)["liveSubscriptions"])
    per_client = await calibrate(options, baseline)
    # The server's resident memory with no client, then with every client
    # connected and subscribed: the difference over the clients is what one
    # connected client costs the server (its socket, WebSocket handler,
    # per-client graph of live subscriptions and send buffer).
    rss_idle = rss_mb(options.server_pid)
    tasks = [asyncio.create_task(client.run(options.port)) for client in clients]
    deadline = time.monotonic() + 30
    while True:
        now = try_stats(options.port)
        if now and int(now["clients"]) >= options.clients:
            break
        if time.monotonic() > deadline:
            sys.exit(f"{now} of {options.clients} clients connected in 30 s")
        await asyncio.sleep(0.05)
    connected = try_stats(options.port)
    rss_connected = rss_mb(options.server_pid)
    # Measure from a clean start: the first updates of each client are the
    # connection's, not the steady state's. This client also needs a moment
    # to catch up with the updates that queued while it connected (measured:
    # without the wait, every client's updates of the window's first tens of
    # ms arrived up to 100-200 ms late, 1-1.5 % of the samples: that alone
    # set p99 and p99.9).
    await asyncio.sleep(options.warmup)
    # (The server's figures over the same window; off the event loop, so
    # the requests do not hold up the clients' messages.)
    await asyncio.to_thread(server_latency, options.port, True)
    before_windows = Windows()
    for client in clients:
        client.updates, client.latencies, client.max_gap_ms, client.last_arrival = 0, [], 0.0, None
        client.windows = before_windows if slow_every and not client.slow else None
    start = time.monotonic()
    if slow_every:
        await before_windows.collect(options.duration, options.window_seconds)
    else:
        await asyncio.sleep(options.duration)
    elapsed = time.monotonic() - start
    for client in clients:
        client.measuring = False
    server = await asyncio.to_thread(server_latency, options.port)
    updates_per_second = round(sum(client.updates for client in clients) / elapsed)
    latencies = sorted(latency for client in clients for latency in client.latencies)
    fast_p99 = percentile(sorted(latency for client in fast for latency in client.latencies), 0.99)
    max_gap = max(client.max_gap_ms for client in clients)
    silent = [client.index for client in clients if client.updates == 0]

    async def overload_round():
        """The slow phase and the phase after it: the slow clients read
        `slow_factor` times slower than their updates come for
        `slow_duration`, then at their rate again while the others are
        measured for `duration` more. Returns the round's figures and its
        two phases' windows."""
        nonlocal max_gap
        # The event loop first catches up with the messages that waited
        # while the previous phase's percentiles were sorted (up to 100k
        # samples, tens of ms during which no message is read); and the
        # server's figures are read off the loop: a blocking request here
        # held every client's messages for its round trip. Either made the
        # slow phase's first window measure the load client, not the server
        # (p99 32-80 ms where the others measured 6-8 ms).
        await asyncio.sleep(options.warmup)
        before = await asyncio.to_thread(try_stats, options.port) or {}
        rss_before = rss_mb(options.server_pid)
        slow_windows = Windows()
        slow_started = time.monotonic()
        for client in clients:
            client.updates, client.latencies, client.max_gap_ms, client.last_arrival = 0, [], 0.0, None
            client.measuring = not client.slow
            client.windows = slow_windows if not client.slow else None
            if client.slow:
                client.read_delay = options.rate_limit_ms * options.slow_factor / 1000
        await slow_windows.collect(options.slow_duration, options.window_seconds)
        slow_ended = time.monotonic()
        # The updates each other client received in the phase, per rate-limit
        # window (one update per window: every window has news, see above).
        windows_in_phase = (slow_ended - slow_started) * 1000 / options.rate_limit_ms
        update_share = min(client.updates for client in fast) / windows_in_phase
        for client in clients:
            client.measuring = False
            client.windows = None
            client.read_delay = 0.0  # the backlog drains (before the next phase and the closing checks)
        after = await asyncio.to_thread(try_stats, options.port) or {}
        rss_after = rss_mb(options.server_pid)
        with_slow_p99 = percentile(sorted(latency for client in fast for latency in client.latencies), 0.99)
        for client in fast:
            if client.updates == 0:
                silent.append(client.index)
        # The phase after: the same clients as the first phase's, once the
        # slow clients caught up (their backlog is a few updates and 4 KB).
        await asyncio.sleep(options.warmup)
        after_windows = Windows()
        for client in fast:
            client.latencies, client.last_arrival = [], None
            client.measuring = True
            client.windows = after_windows
        await after_windows.collect(options.duration, options.window_seconds)
        for client in fast:
            client.measuring = False
            client.windows = None
            max_gap = max(max_gap, client.max_gap_ms)
        figures = {
            "client_drops": int(after.get("clientDrops", 0)) - int(before.get("clientDrops", 0)),
            "client_buffer_depth": int(after.get("clientBufferDepth", 0)),
            "server_rss_mb": {"before": rss_before, "after": rss_after},
            "fast_clients_p99_us": {
                "with_slow": with_slow_p99,
                "after": percentile(sorted(latency for client in fast for latency in client.latencies), 0.99),
            },
            "fast_clients_min_update_share": round(update_share, 4),
            # Slow clients the server closed before the phase ended (its
            # keepalive: see closed_by_server_before_drop).
            "slow_clients_closed_within": sum(
                1 for client in clients if client.slow and client.closed_at and client.closed_at < slow_ended
            ),
            "max_gap_ms": round(max(client.max_gap_ms for client in fast), 1),
        }
        return figures, slow_windows, after_windows

    def compare(rounds):
        """Median window p99 with slow clients over the median without."""
        without_slow = median(before_windows.p99s() + [p for _, _, after in rounds for p in after.p99s()])
        with_slow = median([p for _, slow, _ in rounds for p in slow.p99s()])
        return {
            "window_seconds": options.window_seconds,
            "windows": {
                "before": len(before_windows.closed),
                "with_slow": sum(len(slow.closed) for _, slow, _ in rounds),
                "after": sum(len(after.closed) for _, _, after in rounds),
            },
            "without_slow": without_slow,
            "with_slow": with_slow,
            "ratio": round(with_slow / without_slow, 3) if with_slow and without_slow else None,
        }

    overload = None
    if slow_every:
        rounds = [await overload_round()]
        comparison = compare(rounds)
        if options.p99_ratio_limit > 0 and (comparison["ratio"] is None or comparison["ratio"] > options.p99_ratio_limit):
            # Above the limit: one more round, and the check takes every
            # window of both. A server that slows the others down does so in
            # both rounds; a neighbour that took the cores for part of the
            # first rarely takes them for the same part of the second.
            rounds.append(await overload_round())
            comparison = compare(rounds)
        figures = [round_figures for round_figures, _, _ in rounds]
        overload = {
            "slow_clients": len(clients) - len(fast),
            "seconds": options.slow_duration,
            "rounds": len(rounds),
            "client_drops": min(r["client_drops"] for r in figures),
            "client_buffer_depth": figures[-1]["client_buffer_depth"],
            "server_rss_mb": {
                "before": figures[0]["server_rss_mb"]["before"],
                "after": figures[-1]["server_rss_mb"]["after"],
                "peak": rss_mb(options.server_pid, "VmHWM"),
            },
            "fast_clients_p99_us": {"before": fast_p99, "rounds": [r["fast_clients_p99_us"] for r in figures]},
            # The compared figures: median window p99s.
            "fast_clients_window_p99_us": comparison,
            "fast_clients_max_gap_ms": max(r["max_gap_ms"] for r in figures),
            # The fewest updates one of them received, over the rate-limit
            # windows of a slow phase.
            "fast_clients_min_update_share": min(r["fast_clients_min_update_share"] for r in figures),
            "slow_clients_closed_within": sum(r["slow_clients_closed_within"] for r in figures),
            "window_p99s_us": {
                "before": [round(value) for value in before_windows.p99s()],
                "rounds": [
                    {
                        "with_slow": [round(value) for value in slow.p99s()],
                        "after": [round(value) for value in after.p99s()],
                    }
                    for _, slow, after in rounds
                ],
            },
        }

    # Clients the server closed before the drop. A slow client may be one
    # once its phase is over (market-server pings every --ping-seconds, 30 by
    # default, and closes a connection whose pong has not come by the next
    # ping; a slow client's pong waits behind its unread updates). A client
    # within its rate never is.
    closed_by_server = [client for client in clients if client.closed_at is not None]
    fast_closed = [client.index for client in closed_by_server if not client.slow]
    errors_before_drop = (
        [f"the server closed {len(fast_closed)} clients that read at their rate: {fast_closed[:10]}"] if fast_closed else []
    )
    # Drop half abruptly: no closing handshake.
    dropped = clients[: options.clients // 2]
    for client in dropped:
        if client.closed_at is None:
            client.connection.transport.abort()
    dropped_at = time.monotonic()
    settled_ms = None
    while time.monotonic() - dropped_at < 1.0:
        # Those the server closes meanwhile leave its count too.
        remaining = sum(1 for client in clients[len(dropped):] if client.closed_at is None)
        expected = baseline + remaining * per_client
        now = try_stats(options.port)
        if now and int(now["clients"]) == remaining and int(now["liveSubscriptions"]) == expected:
            settled_ms = (time.monotonic() - dropped_at) * 1000
            break
        await asyncio.sleep(0.01)
    after_drop = try_stats(options.port)
    for client in clients[len(dropped):]:
        if client.closed_at is None:
            await client.connection.close()
    await asyncio.gather(*tasks, return_exceptions=True)

    errors = errors_before_drop + [error for client in clients for error in client.errors]
    limit = options.rate_limit_ms + options.tolerance_ms
    if max_gap > limit:
        errors.append(f"a gap of {max_gap:.1f} ms between updates (rate limit {options.rate_limit_ms} ms + tolerance)")
    if overload:
        if overload["slow_clients_closed_within"]:
            errors.append(
                f"{overload['slow_clients_closed_within']} slow clients were closed before the slow phase ended "
                "(a server pinging more often than the phase lasts closes them: market-server --ping-seconds)"
            )
        if overload["fast_clients_min_update_share"] < options.min_update_share:
            errors.append(
                f"a client reading at its rate received {overload['fast_clients_min_update_share']:.1%} of the "
                f"slow phase's rate-limit windows (at least {options.min_update_share:.0%}): it lost updates"
            )
        if overload["client_drops"] <= 0:
            errors.append("the slow clients' updates were not dropped (or not counted in /stats): the overload did not reach the server")
        rss = overload["server_rss_mb"]
        if rss["before"] is not None and rss["after"] - rss["before"] > options.rss_growth_limit_mb:
            errors.append(f"the server's RSS grew from {rss['before']} MB to {rss['after']} MB under slow clients")
        p99 = overload["fast_clients_window_p99_us"]
        if options.p99_ratio_limit > 0 and (p99["ratio"] is None or p99["ratio"] > options.p99_ratio_limit):
            errors.append(
                f"the other clients' median window p99 went from {p99['without_slow']} us without slow clients "
                f"to {p99['with_slow']} us with them (ratio {p99['ratio']}, limit {options.p99_ratio_limit})"
            )
    if silent:
        errors.append(f"{len(silent)} clients received nothing while measuring")
    if settled_ms is None:
        errors.append(
            f"after dropping {len(dropped)} clients, the server reported {after_drop} after 1 s; "
            f"expected clients={remaining} liveSubscriptions={expected}"
        )
    result = {
        "clients": options.clients,
        "subscriptions_per_client": per_client,
        "connected": connected,
        "server_rss_mb": {"idle": rss_idle, "connected": rss_connected},
        "server_rss_per_client_kb": (
            None
            if rss_idle is None or rss_connected is None
            else round((rss_connected - rss_idle) * 1024 / options.clients, 1)
        ),
        "updates_per_second": updates_per_second,
        "latency_us": {
            "p50": percentile(latencies, 0.50),
            "p99": percentile(latencies, 0.99),
            "p99.9": percentile(latencies, 0.999),
        },
        "server_latency_us": server,
        "max_gap_ms": round(max_gap, 1),
        "drop_settled_ms": None if settled_ms is None else round(settled_ms, 1),
        "closed_by_server_before_drop": {
            "slow": sum(1 for client in closed_by_server if client.slow),
            "others": len(fast_closed),
        },
        "overload": overload,
        "errors": errors[:10],
    }
    print(json.dumps(result))
    sys.exit(1 if errors else 0)


asyncio.run(main())
