#!/usr/bin/env python3
# This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
"""One line of load.py's JSON result (read from stdin), for scripts/test's summary."""
import json
import sys

result = json.loads(sys.stdin.read().strip().splitlines()[-1])
latency = result["latency_us"]
line = "{} updates/s, p50 {:.0f} us, p99 {:.0f} us".format(result["updates_per_second"], latency["p50"], latency["p99"])
if result.get("server_rss_per_client_kb") is not None:
    line += ", server RSS {:g} KB per connected client".format(result["server_rss_per_client_kb"])
overload = result.get("overload")
if overload:
    rss = overload["server_rss_mb"]
    p99 = overload["fast_clients_window_p99_us"]
    line += (
        "; {} slow clients for {:.0f} s: {} updates dropped, server RSS {} -> {} MB,"
        " others' median {:g} s p99 {:.0f} us without, {:.0f} us with (x{}{})"
    ).format(
        overload["slow_clients"], overload["seconds"], overload["client_drops"], rss["before"], rss["after"],
        p99["window_seconds"], p99["without_slow"], p99["with_slow"], p99["ratio"],
        ", over {} rounds".format(overload["rounds"]) if overload.get("rounds", 1) > 1 else "",
    )
print(line)
