"""One server's tools/call round trips through the official MCP Python SDK's
stdio client (PyPI `mcp`), one call at a time, as a Python agent makes them.

Run by `wharf-bench-driver` (`cargo xtask bench`) in the interop tests'
virtualenv, with a JSON spec as its only argument: the server's command and
arguments, the SDK mode, the tool and its arguments, and the warm-up and
measured seconds. Prints one JSON line: each measured call's latency in
nanoseconds, the measured window, and the server's CPU time over it.
"""

import asyncio
import json
import os
import sys
import time

from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def server_pid():
    """The server: the one process this one started."""
    pids = []
    for task in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{task}/children") as children:
            pids += [int(pid) for pid in children.read().split()]
    if len(pids) != 1:
        raise SystemExit(f"expected one server process, found {pids}")
    return pids[0]


def cpu_ns(pid):
    """User and system time of all the process's threads so far."""
    with open(f"/proc/{pid}/stat") as stat:
        # After the command name (in parentheses): field 3 onwards; utime and
        # stime are fields 14 and 15.
        fields = stat.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1_000_000_000 // TICKS_PER_SECOND


async def measure(spec):
    server = StdioServerParameters(command=spec["command"], args=spec["args"])
    async with Client(server, mode=spec["mode"], read_timeout_seconds=60) as client:
        pid = server_pid()

        async def call():
            result = await client.call_tool(spec["tool"], spec["arguments"])
            if result.is_error:
                raise SystemExit(f"the call failed: {result}")

        warm_until = time.monotonic() + spec["warmup_s"]
        while time.monotonic() < warm_until:
            await call()
        nanos = []
        cpu_before = cpu_ns(pid)
        start = time.perf_counter_ns()
        end = start + int(spec["measure_s"] * 1e9)
        while (sent := time.perf_counter_ns()) < end:
            await call()
            nanos.append(time.perf_counter_ns() - sent)
        window = time.perf_counter_ns() - start
        cpu = cpu_ns(pid) - cpu_before
    return {"nanos": nanos, "window_ns": window, "server_cpu_ns": cpu}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(measure(json.loads(sys.argv[1])))))
