"""The loopback OpenAI-compatible endpoint, driven by the real `openai` backend over HTTP."""

import json
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from sandbox.engine import Engine
from sandbox.llm import LLMRequest, LLMSettings, Message, ScriptedBackend, make_llm
from sandbox.llm.loopback import Loopback

ROLE = {"chat.opening": lambda request: f"Hello from {len(request.messages)} message(s)."}


class Verdict(BaseModel):
    choice: Literal["yes", "no", "maybe"]
    confidence: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1, max_length=40)


FALLBACK = Verdict(choice="maybe", confidence=1, reason="fallback")


def script() -> ScriptedBackend:
    return ScriptedBackend(ROLE, model_id="scripted/test")


def over_http(server: Loopback, **settings):
    settings = {"retry_initial_wait_s": 0.001, **settings}
    return make_llm(LLMSettings(model="openai/test", base_url=server.url, **settings))


def request(i: int, tag: str = "test.ask", **kw) -> LLMRequest:
    return LLMRequest(messages=[Message(role="user", content=f"question {i}")], tag=tag, seed=i,
                      **kw)


def test_answers_are_the_scripted_backends_answers():
    requests = [request(1), request(2, tag="chat.opening"),
                request(3, schema=Verdict, fallback=FALLBACK)]
    local = make_llm(LLMSettings(), backend=script())
    with Loopback(script()) as server:
        remote = over_http(server)
        for req in requests:
            here, there = local.complete(req), remote.complete(req)
            assert there.text == here.text and there.faults == []
            assert there.parsed == here.parsed
            assert there.usage.prompt_tokens > 0
    assert isinstance(there.parsed, Verdict)  # the last one: schema-bound


def test_an_engine_keeps_32_calls_in_flight_measured_by_the_server():
    def asker(engine, i):
        yield engine.ask(request(i))

    # A second's latency: on a loaded machine the 32 requests take more than 0.2 s to be sent,
    # and the first answered would leave before the last arrived (31 seen at once, not 32).
    with Loopback(script(), latency_s=1.0) as server:
        llm = over_http(server, max_concurrency=32)
        engine = Engine(llm=llm, seed=0, start_time=datetime(2024, 3, 4, 8))
        for i in range(64):
            engine.process(asker(engine, i))
        engine.run()
        assert len(engine.calls.records) == 64
        assert server.stats()["max_in_flight"] == 32
        assert server.stats()["requests"] == 64


def test_an_answer_comes_after_the_latency_not_a_delayed_ack_later():
    """With Nagle's algorithm on, each answer on a kept-alive connection waited about 40 ms for
    the client's delayed ACK: 20 calls at no latency took 0.9 s."""
    with Loopback(script()) as server:
        llm = over_http(server)
        llm.complete(request(0))  # the connection is open
        started = time.perf_counter()
        for i in range(20):
            llm.complete(request(i))
        assert time.perf_counter() - started < 0.4


def test_the_backend_holds_its_connection_limit_across_callers():
    """Episodes running side by side (--jobs) share one backend and its limit."""
    with Loopback(script(), latency_s=0.1) as server:
        llm = over_http(server, max_concurrency=4)
        with ThreadPoolExecutor(16) as pool:
            list(pool.map(llm.complete, [request(i) for i in range(32)]))
        assert server.stats()["max_in_flight"] == 4


def test_injected_rate_limits_and_server_errors_are_retried_and_counted():
    faults = ("429", "429_retry_after", "500", "503")
    with Loopback(script(), fault_rate=0.4, faults=faults, seed=7, retry_after_s=0) as server:
        llm = over_http(server, retry_attempts=20)
        with ThreadPoolExecutor(8) as pool:
            done = list(pool.map(llm.complete, [request(i) for i in range(60)]))
        injected = server.stats()["faults"]
    seen = Counter(f for c in done for f in c.faults)
    assert all(c.text.startswith("Scripted answer") for c in done)  # every call got through
    assert sum(injected.values()) > 10
    assert seen["rate_limit"] == injected.get("429", 0) + injected.get("429_retry_after", 0)
    assert seen["server_error"] == injected.get("500", 0) + injected.get("503", 0)
    assert sum(c.retries for c in done) == sum(injected.values())


def test_timeouts_and_resets_are_transport_faults_that_are_retried():
    with Loopback(script(), fault_rate=0.5, faults=("timeout", "reset"), seed=1,
                  timeout_sleep_s=3.0) as server:
        llm = over_http(server, timeout_s=0.3, retry_attempts=20)
        done = [llm.complete(request(i)) for i in range(12)]
        injected = server.stats()["faults"]
    seen = Counter(f for c in done for f in c.faults)
    assert injected["timeout"] >= 1 and injected["reset"] >= 1
    assert seen["timeout"] == injected["timeout"]
    assert seen["connection"] == injected["reset"]


def test_bad_answers_are_repaired_reasked_or_fall_back_never_raise():
    kinds = ("malformed", "truncated", "off_schema", "empty")
    with Loopback(script(), fault_rate=1.0, faults=kinds, seed=3) as server:
        llm = over_http(server)
        done = [llm.complete(request(i, schema=Verdict, fallback=FALLBACK)) for i in range(8)]
        assert server.stats()["requests"] == 8 * 3  # three structured attempts each
    assert all(isinstance(c.parsed, Verdict) for c in done)
    assert all("fallback" in c.faults or "repaired" in c.faults for c in done)


def test_the_command_line_server_and_its_errors(tmp_path):
    bad = subprocess.run([sys.executable, "-m", "sandbox.llm.loopback", "--faults", "gremlins"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "gremlins" in bad.stderr
    assert "Traceback" not in bad.stderr
    proc = subprocess.Popen([sys.executable, "-m", "sandbox.llm.loopback", "--port", "0",
                             "--latency", "0"], stdout=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().split()[-1]
        assert url.startswith("http://127.0.0.1:")
        llm = make_llm(LLMSettings(model="openai/anything", base_url=url))
        assert llm.complete(request(5)).text
        with urllib.request.urlopen(f"{url}/loopback/stats", timeout=5) as answer:
            assert json.load(answer)["requests"] == 1
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_unknown_fault_kinds_and_rates_are_refused():
    with pytest.raises(ValueError, match="gremlins"):
        Loopback(script(), faults=("gremlins",))
    with pytest.raises(ValueError, match="between 0 and 1"):
        Loopback(script(), fault_rate=1.5)


def test_a_responder_that_reads_the_schema_answers_as_in_process():
    """The PingPong judge sizes its answer by the schema's turn count; over HTTP it must see
    the same schema, not None (the handler crashed and the client saw a reset)."""
    def sized(request):
        return json.dumps({"items": ["x"] * request.json_schema()["properties"]["items"]
                           ["minItems"]})

    class Items(BaseModel):
        items: list[str] = Field(min_length=3)

    backend = ScriptedBackend({"judge": sized}, model_id="scripted/test")
    ask = request(1, tag="judge", schema=Items)
    with Loopback(backend) as server:
        there = over_http(server).complete(ask)
    assert there.faults == [] and there.parsed == Items(items=["x"] * 3)
