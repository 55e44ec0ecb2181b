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

Prints one JSON line with the figures; exits 1 if a check failed.

Needs the `websockets` package (PyPI).
"""
import argparse
import asyncio
import json
import random
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


class Client:
    def __init__(self, index, instruments):
        self.index = index
        self.instruments = instruments
        self.last_sequence = {i: 0 for i in instruments}
        self.updates = 0
        self.latencies = []
        self.max_gap_ms = 0.0
        self.errors = []
        self.last_arrival = None
        self.connection = None
        self.measuring = True

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
            if self.last_arrival is not None:
                self.max_gap_ms = max(self.max_gap_ms, (now_ns - self.last_arrival) / 1e6)
        self.last_arrival = now_ns

    async def run(self, port):
        path = ",".join(map(str, self.instruments))
        async with websockets.connect(f"ws://127.0.0.1:{port}/ws?instruments={path}", max_queue=None) as connection:
            self.connection = connection
            try:
                async for message in connection:
                    self.check(message, time.monotonic_ns())
            except websockets.ConnectionClosed:
                pass


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
    options = parser.parse_args()

    generator = random.Random(42)
    clients = [
        Client(index, generator.sample(range(options.instruments), options.per_client))
        for index in range(options.clients)
    ]
    baseline = int(stats(options.port)["liveSubscriptions"])
    per_client = await calibrate(options, baseline)
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
    for client in clients:
        client.updates, client.latencies, client.max_gap_ms, client.last_arrival = 0, [], 0.0, None
    start = time.monotonic()
    await asyncio.sleep(options.duration)
    elapsed = time.monotonic() - start
    for client in clients:
        client.measuring = False
    server = await asyncio.to_thread(server_latency, options.port)

    # Drop half abruptly: no closing handshake.
    dropped = clients[: options.clients // 2]
    for client in dropped:
        client.connection.transport.abort()
    remaining = options.clients - len(dropped)
    expected = baseline + remaining * per_client
    dropped_at = time.monotonic()
    settled_ms = None
    while time.monotonic() - dropped_at < 1.0:
        now = try_stats(options.port)
        if now and int(now["clients"]) == remaining and int(now["liveSubscriptions"]) == expected:
            settled_ms = (time.monotonic() - dropped_at) * 1000
            break
        await asyncio.sleep(0.01)
    after_drop = try_stats(options.port)
    for client in clients[len(dropped):]:
        await client.connection.close()
    await asyncio.gather(*tasks, return_exceptions=True)

    errors = [error for client in clients for error in client.errors]
    latencies = sorted(latency for client in clients for latency in client.latencies)
    max_gap = max(client.max_gap_ms for client in clients)
    limit = options.rate_limit_ms + options.tolerance_ms
    if max_gap > limit:
        errors.append(f"a gap of {max_gap:.1f} ms between updates (rate limit {options.rate_limit_ms} ms + tolerance)")
    silent = [client.index for client in clients if client.updates == 0]
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
        "updates_per_second": round(sum(client.updates for client in clients) / elapsed),
        "latency_us": {
            "p50": percentile(latencies, 0.50),
            "p99": percentile(latencies, 0.99),
            "p99.9": percentile(latencies, 0.999),
        },
        "server_latency_us": server,
        "max_gap_ms": round(max_gap, 1),
        "drop_settled_ms": None if settled_ms is None else round(settled_ms, 1),
        "errors": errors[:10],
    }
    print(json.dumps(result))
    sys.exit(1 if errors else 0)


asyncio.run(main())
