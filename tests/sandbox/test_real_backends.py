"""The local backend and the openai backend against real components, offline.

The openai backend talks to a real OpenAI-compatible server on loopback: the llama.cpp server
(llama-cpp-python[server]) serving the embedded SmolLM2 weights.
"""

import socket
import subprocess
import sys
import time
import urllib.request
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from sandbox.llm import LLMRequest, LLMSettings, Message, make_llm
from sandbox.llm.local import embedded_model_path
from sandbox.llm.openai_compat import OpenAIBackend

pytestmark = pytest.mark.model


class City(BaseModel):
    # An enum, which the grammar enforces (measured: llama.cpp grammars do not bound integers).
    country: Literal["France", "Spain", "Italy"]
    city: str = Field(min_length=1, max_length=40)


FALLBACK = City(country="Italy", city="unknown")


def city_request(**kw) -> LLMRequest:
    return LLMRequest(messages=[Message(role="user", content="Name a large city in France.")],
                      tag="test.city", schema=City, fallback=FALLBACK, seed=0,
                      temperature=0.2, max_tokens=60, **kw)


def test_local_backend_answers_a_schema_bound_request_with_a_valid_object(monkeypatch,
                                                                          embedded_weights):
    # The stack as a command builds it, from the settings a user would set: one thread (`make
    # test`'s other worker shares the 2 cores; llama.cpp's threads spin while they wait) and a
    # set format, not a timing of the formats (tests/conftest.py).
    monkeypatch.setenv("SANDBOX_LLM_THREADS", "1")
    monkeypatch.setenv("SANDBOX_LLM_WEIGHTS", embedded_weights)
    llm = make_llm(LLMSettings(model="local/smollm2-135m"))
    completion = llm.complete(city_request())
    assert isinstance(completion.parsed, City)
    assert "fallback" not in completion.faults
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    port = free_port()
    # The server logs a lot while loading: a file, not a pipe nobody drains (it would block).
    log_path = tmp_path_factory.mktemp("llama_server") / "server.log"
    log = log_path.open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model",
         str(embedded_model_path("smollm2-135m")), "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", "2048", "--n_threads", "1", "--n_threads_batch", "1"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 90
    try:
        while True:
            if proc.poll() is not None:
                pytest.fail(f"llama.cpp server exited: {log_path.read_text()[-2000:]}")
            try:
                urllib.request.urlopen(f"{url}/models", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail("llama.cpp server did not answer within 90 s")
                time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def server_llm(url: str, dialect: str):
    return make_llm(LLMSettings(model="openai/smollm2", base_url=url, json_dialect=dialect,
                                retry_attempts=2, retry_initial_wait_s=0.01))


def test_openai_backend_plain_call(llama_server):
    completion = server_llm(llama_server, "json_object").complete(LLMRequest(
        messages=[Message(role="user", content="Say hello to Paris.")], tag="test.plain",
        max_tokens=20, seed=0))
    # A 20-token budget may cut the greeting short: that is counted as truncated (and kept),
    # never as any other fault.
    assert completion.text.strip()
    assert completion.faults == (["truncated"] if completion.finish_reason == "length" else [])
    assert completion.usage.completion_tokens > 0


def test_openai_backend_schema_bound_call_with_the_llama_cpp_dialect(llama_server):
    completion = server_llm(llama_server, "json_object").complete(city_request())
    assert isinstance(completion.parsed, City) and "fallback" not in completion.faults


def test_a_request_longer_than_the_model_takes_is_counted_too_long_and_falls_back(
        llama_server):
    # Asking for far more context than the server holds is refused by the server (400,
    # context_length_exceeded): the call comes back with the fallback, counted as too long
    # with the server's reason, not as an unavailable endpoint (it would be asked again on
    # every run), and not retried.
    huge = "word " * 5000
    completion = server_llm(llama_server, "json_object").complete(LLMRequest(
        messages=[Message(role="user", content=huge)], tag="test.too_long", schema=City,
        fallback=FALLBACK, max_tokens=20, seed=0))
    assert completion.parsed == FALLBACK
    assert completion.faults == ["too_long", "fallback"] and completion.retries == 0
    assert completion.refused.startswith("400: ") and "context" in completion.refused


def test_dialect_is_an_endpoint_setting():
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1", dialect="json_object")
    fmt = backend._response_format(city_request())
    assert fmt["type"] == "json_object" and fmt["schema"]["title"] == "City"
    backend = OpenAIBackend("m", base_url="http://127.0.0.1:1/v1")
    fmt = backend._response_format(city_request())
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "City"
