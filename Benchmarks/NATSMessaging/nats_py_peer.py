#!/usr/bin/env python3
# This source file is part of SignalKit. Licensed under Apache License v2.0 (see LICENSE).
"""signalkit-nats-bench's nats-py peer: one mode per run, its figures as one line of JSON.

  w19-sub URL SUBJECT N      subscribe, print {"ready": true}, count N messages,
                             print {"count": …, "end_ns": …} (CLOCK_MONOTONIC)
  w19-pub URL SUBJECT N      publish N 64-byte messages, flush,
                             print {"start_ns": …, "end_ns": …}
  w20 URL SUBJECT N          N requests one after the other, print {"p50_us": …, "p99_us": …}
  w21 URL STREAM SUBJECT N CONSUMER   a pull consumer: fetch in batches of 256, ack each,
                             print {"count": …, "seconds": …}
"""
import asyncio
import json
import sys
import time

import nats
from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

PAYLOAD = b"x" * 64


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def emit(value):
    print(json.dumps(value), flush=True)


async def w19_sub(url, subject, count):
    nc = await nats.connect(url)
    done = asyncio.Event()
    received = 0
    end = 0

    async def handler(msg):
        nonlocal received, end
        received += 1
        if received == count:
            end = now_ns()
            done.set()

    await nc.subscribe(subject, cb=handler, pending_msgs_limit=count + 1024, pending_bytes_limit=1 << 30)
    await nc.flush()
    emit({"ready": True})
    try:
        await asyncio.wait_for(done.wait(), timeout=120)
    except asyncio.TimeoutError:
        pass
    emit({"count": received, "end_ns": end})
    await nc.close()


async def w19_pub(url, subject, count):
    nc = await nats.connect(url)
    start = now_ns()
    for _ in range(count):
        await nc.publish(subject, PAYLOAD)
    await nc.flush()
    end = now_ns()
    emit({"start_ns": start, "end_ns": end})
    await nc.close()


async def w20(url, subject, count):
    nc = await nats.connect(url)
    samples = []
    for _ in range(count):
        start = time.perf_counter_ns()
        await nc.request(subject, PAYLOAD, timeout=5)
        samples.append(time.perf_counter_ns() - start)
    samples.sort()
    emit({"p50_us": samples[len(samples) // 2] / 1000, "p99_us": samples[len(samples) * 99 // 100] / 1000})
    await nc.close()


async def w21(url, stream, subject, count, consumer):
    nc = await nats.connect(url)
    js = nc.jetstream()
    config = ConsumerConfig(deliver_policy=DeliverPolicy.ALL, ack_policy=AckPolicy.EXPLICIT)
    start = time.perf_counter_ns()
    subscription = await js.pull_subscribe(subject, durable=consumer, stream=stream, config=config)
    received = 0
    while received < count:
        try:
            messages = await subscription.fetch(min(256, count - received), timeout=5)
        except nats.errors.TimeoutError:
            break
        for message in messages:
            await message.ack()
            received += 1
    await nc.flush()
    seconds = (time.perf_counter_ns() - start) / 1e9
    emit({"count": received, "seconds": seconds})
    await js.delete_consumer(stream, consumer)
    await nc.close()


def main():
    mode, url = sys.argv[1], sys.argv[2]
    if mode == "w19-sub":
        asyncio.run(w19_sub(url, sys.argv[3], int(sys.argv[4])))
    elif mode == "w19-pub":
        asyncio.run(w19_pub(url, sys.argv[3], int(sys.argv[4])))
    elif mode == "w20":
        asyncio.run(w20(url, sys.argv[3], int(sys.argv[4])))
    elif mode == "w21":
        asyncio.run(w21(url, sys.argv[3], sys.argv[4], int(sys.argv[5]), sys.argv[6]))
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
