"""The loopback endpoint in a process of its own, for the benchmarks that drive the real `openai`
backend against it (bench/suite.py, bench/growth.py).

    with running_endpoint(0.5) as url:      # scripted/town answering after 0.5 s a call
        settings = LLMSettings(model="openai/town", base_url=url, max_concurrency=CONNECTIONS)
        ...
        endpoint_stats(url)                 # {"requests": ..., "max_in_flight": ..., ...}

Its own process, so the server's threads do not share the benchmark's interpreter (nor its
peak memory); children of the benchmark reach it by URL with OPENAI_API_KEY=loopback.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator

CONNECTIONS = 64  # what the benchmarks let the openai backend hold open at once
API_KEY = "loopback"  # the endpoint takes any key; the openai client wants one


def start_endpoint(latency: float, script: str = "town", die_after: int | None = None,
                   port: int = 0) -> tuple[subprocess.Popen, str]:
    """Start `python -m sandbox.llm.loopback` answering with scripted/`script` after `latency`
    seconds (on `port`, 0: a free one; killed after `die_after` answers when given): the
    process and its base URL."""
    dies = ["--die-after", str(die_after)] if die_after is not None else []
    proc = subprocess.Popen([sys.executable, "-m", "sandbox.llm.loopback", "--script", script,
                             "--latency", str(latency), "--port", str(port), *dies],
                            stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().split()[-1]
    return proc, url


def stop_endpoint(proc: subprocess.Popen) -> None:
    if proc.poll() is None:  # one started with die_after may have ended already
        proc.terminate()
    proc.wait(timeout=30)


@contextlib.contextmanager
def running_endpoint(latency: float, script: str = "town") -> Iterator[str]:
    """The endpoint's URL while the block runs; stopped after it, however it ends."""
    proc, url = start_endpoint(latency, script)
    try:
        yield url
    finally:
        stop_endpoint(proc)


def endpoint_stats(url: str) -> dict:
    """The endpoint's counts: requests, in_flight, max_in_flight, faults."""
    with urllib.request.urlopen(f"{url}/loopback/stats", timeout=10) as answer:
        return json.load(answer)
