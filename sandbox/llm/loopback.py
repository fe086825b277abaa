"""A loopback OpenAI-compatible endpoint for load tests, benchmarks and fault soaks.

It answers `POST /v1/chat/completions` with a scripted backend's answers after a fixed latency,
so the real `openai` backend -- its HTTP client, connection pool and our retries -- runs at 64
connections without a GPU. Answers match the in-process scripted backend's: the request's
messages, seed and JSON schema come in the body and the purpose tag in the `X-Sandbox-Tag`
header the openai backend sends.

`refuse_chat=401` makes it a dead key: the models list still answers, every chat call is
refused with that status (settable while it runs, to bring the key back to life); a dialect
probe is still answered: a key that died after the command started.
`formats=("json_object",)` makes it refuse a request whose response_format is of another type
(here json_schema) as llama-cpp-python's server does: HTTP 500 with a validation error
(`--refuse-json-schema`; `formats=()` refuses every response_format). A one-token probe of the
JSON dialect (sandbox/llm/dialects.py) is answered too, counted apart (`probes`): it is no
episode's call.
`context_tokens=N` gives it a context window: a request whose prompt (its words) and
max_tokens come to more is refused as llama-cpp-python's server refuses one, HTTP 400
`context_length_exceeded` (`--context N`).
`die_after=N` makes it an endpoint that dies during a run: it answers N chat calls, then every
connection is reset, as by a server that crashed (set `dead = False` to bring it back, or
`die_after=None`); from the command line, `--die-after N` ends the process after the Nth
answer, a real kill.

A fault rate makes it misbehave like a real endpoint under load. Each request draws, from one
seeded generator, whether it fails and how (`FAULT_KINDS`). The server counts requests, faults
by kind, the most requests it held at once, and the tokens of every answer it gave (what its
usage said: the server-side count a run's calls.jsonl is held against) (`stats()`, also
`GET /loopback/stats`).

    with Loopback(script="town", latency_s=0.5, fault_rate=0.3, seed=0) as server:
        llm = make_llm(LLMSettings(model="openai/town", base_url=server.url))

From the command line (prints the URL, then the counts when stopped with Ctrl-C):

    python -m sandbox.llm.loopback --script town --latency 0.5 --port 8000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import socket
import struct
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from pydantic import BaseModel

from .base import LLMRequest, Message
from .dialects import PROBE_TAG
from .scripted import ScriptedBackend

TAG_HEADER = "X-Sandbox-Tag"
AGENT_HEADER = "X-Sandbox-Agent"  # who asked: a test asserts which agents an endpoint served

# What a misbehaving endpoint does, one name each (the keys of `stats()["faults"]`):
FAULT_KINDS = (
    "malformed",        # 200, the answer is prose around broken JSON
    "truncated",        # 200, half the answer, finish_reason "length"
    "off_schema",       # 200, valid JSON whose values break the schema
    "empty",            # 200, an empty answer
    "timeout",          # no answer until after the client's timeout
    "429_retry_after",  # rate limited, with a Retry-After header
    "429",              # rate limited, without one
    "500",              # internal server error
    "503",              # service unavailable
    "reset",            # the connection is reset before any answer
)
RESPONSE_FORMATS = ("json_schema", "json_object")
# How llama-cpp-python's server (0.3.36) refuses a json_schema response_format: a 500 whose
# body is FastAPI's validation error.
LLAMA_CPP_REFUSAL = ("1 validation error:\n  {{'type': 'literal_error', 'loc': ('body', "
                     "'response_format', 'type'), 'msg': \"Input should be {allowed}\", "
                     "'input': '{given}'}}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a request asleep in a timeout fault must not hold up stop()
    request_queue_size = 256  # 64 clients connecting at once must not overflow the backlog
    loopback: Loopback


class Loopback:
    """The server; a context manager that runs it in a thread on a free port (or `port`)."""

    def __init__(self, script: str | ScriptedBackend = "default", *, latency_s: float = 0.0,
                 latency_max_s: float | None = None, fault_rate: float = 0.0,
                 faults: tuple[str, ...] = FAULT_KINDS, seed: int = 0,
                 timeout_sleep_s: float = 10.0, retry_after_s: float = 1.0,
                 echo_auth: bool = False, refuse_chat: int | None = None,
                 die_after: int | None = None, formats: tuple[str, ...] = RESPONSE_FORMATS,
                 context_tokens: int | None = None, host: str = "127.0.0.1", port: int = 0):
        unknown = set(faults) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}: known are {FAULT_KINDS}")
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"fault rate {fault_rate}: must be between 0 and 1")
        if isinstance(script, str):
            from . import _scripted_backend

            script = _scripted_backend(script)
        self.backend = script
        self.latency_s = latency_s
        # Above latency_s: each answer's latency drawn at random between the two (seeded, in
        # arrival order), so answers come back in every order (running ahead's tests).
        self.latency_max_s = latency_max_s
        if latency_max_s is not None and latency_max_s < latency_s:
            raise ValueError(f"latency max {latency_max_s} is below the latency {latency_s}")
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(faults)
        self.timeout_sleep_s = timeout_sleep_s
        self.retry_after_s = retry_after_s
        # Some proxies echo the request's headers in their error bodies, the API key with them:
        # on, every error answer does, so a test can check that no such message is written.
        self.echo_auth = echo_auth
        # An HTTP status every chat call is refused with (401: a dead key), or None.
        self.refuse_chat = refuse_chat
        # How many chat calls it answers before it dies (None: it never does), whether it has,
        # and what its death does besides resetting every connection (the command line's:
        # end the process).
        self.die_after = die_after
        # The response_format types it takes (besides text); another is refused as invalid.
        self.formats = tuple(formats)
        # Its context window in tokens (None: unbounded), and the requests refused for it.
        self.context_tokens = context_tokens
        self.refused_too_long = 0
        self.probes = 0  # dialect probes answered or refused
        self.refused_formats = 0  # episode requests refused for their response_format
        self.prompt_tokens = self.completion_tokens = 0  # of every answer given
        self.arrived = self.answered = 0  # chat calls that came in, and those answered
        self.dead = False
        self.on_death = None
        self.seed = seed
        self._seen: dict[str, int] = {}  # each request body -> how many times it came
        self._latency_rng = random.Random(seed + 1)  # latencies, in arrival order
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.faults: Counter[str] = Counter()
        # Of those, the ones drawn for requests without a JSON schema: prose or a JSON text is
        # a valid answer to a free-text call, so "malformed" and "off_schema" are no fault there.
        self.free_text_faults: Counter[str] = Counter()
        # Every chat request's (tag, agent), in arrival order: which purposes and which agents
        # this endpoint served (tests of routing; `calls()`).
        self.request_log: list[tuple[str, str]] = []
        self._server = _Server((host, port), _Handler)
        self._server.loopback = self
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stats(self) -> dict:
        with self._lock:
            return {"requests": self.requests, "in_flight": self.in_flight,
                    "max_in_flight": self.max_in_flight, "faults": dict(self.faults),
                    "free_text_faults": dict(self.free_text_faults), "probes": self.probes,
                    "refused_formats": self.refused_formats,
                    "refused_too_long": self.refused_too_long,
                    "prompt_tokens": self.prompt_tokens,
                    "completion_tokens": self.completion_tokens}

    def calls(self) -> list[tuple[str, str]]:
        """(tag, agent) of every chat request received so far."""
        with self._lock:
            return list(self.request_log)

    def reset_stats(self) -> None:
        with self._lock:
            self.request_log.clear()
            self.requests = self.max_in_flight = self.probes = self.refused_formats = 0
            self.refused_too_long = 0
            self.prompt_tokens = self.completion_tokens = 0
            self.faults.clear()
            self.free_text_faults.clear()

    # -- running --------------------------------------------------------------------------------
    def start(self) -> Loopback:
        self._thread = threading.Thread(target=self._server.serve_forever, name="loopback",
                                        kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes requests sleeping in a latency or a timeout fault
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def serve_forever(self) -> None:
        try:
            self._server.serve_forever(poll_interval=0.05)
        finally:
            self._stopping.set()
            self._server.server_close()

    def __enter__(self) -> Loopback:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- answering ------------------------------------------------------------------------------
    def _begin(self, body: dict, free_text: bool = False) -> str | None:
        """Count a request in; the fault it gets, if any: drawn from the seed, the request and
        how many times the same request came before (its retries draw again), not from the
        order requests arrive in, so a run that sends the same calls in another order (its
        residents running ahead) meets the same faults."""
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            asked = json.dumps(body, sort_keys=True, default=str)
            seen = self._seen[asked] = self._seen.get(asked, 0) + 1
            draw = random.Random(hashlib.sha256(f"{self.seed}:{seen}:{asked}".encode()).digest())
            if self.fault_rate and draw.random() < self.fault_rate:
                fault = draw.choice(self.fault_kinds)
                self.faults[fault] += 1
                if free_text:
                    self.free_text_faults[fault] += 1
                return fault
            return None

    def _end(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def latency(self) -> float:
        """This answer's latency: the set one, or one drawn up to latency_max_s."""
        if self.latency_max_s is None:
            return self.latency_s
        with self._lock:
            return self._latency_rng.uniform(self.latency_s, self.latency_max_s)

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    def answer(self, body: dict, tag: str) -> tuple[str, int, int]:
        """The scripted answer to a chat-completions body: text, prompt and completion tokens."""
        messages = [Message(role=m["role"], content=_text(m.get("content")))
                    for m in body["messages"]]
        schema = _schema(body.get("response_format"))
        request = LLMRequest(messages=messages, tag=tag, seed=body.get("seed"),
                             schema=_schema_model(schema) if schema is not None else None)
        text = self.backend.answer(request, schema=schema)
        prompt_tokens = sum(len(m.content.split()) for m in messages)
        return text, prompt_tokens, len(text.split())


def _text(content) -> str:
    if isinstance(content, list):  # the content-parts form
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def _schema(response_format: dict | None) -> dict | None:
    """The JSON schema of either dialect (json_schema: OpenAI, vLLM; json_object: llama.cpp)."""
    if not response_format:
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    return response_format.get("schema")


def _schema_model(schema: dict) -> type[BaseModel]:
    """A stand-in pydantic class whose JSON schema is the one that came over HTTP, so that a
    responder reading `request.json_schema()` (a judge's count of turns) answers as it
    does in process."""

    class FromRequest(BaseModel):
        @classmethod
        def model_json_schema(cls, *args, **kwargs) -> dict:
            return schema

    return FromRequest


def _off_schema(text: str) -> str:
    """The answer's keys with values of the wrong type (or an object the schema never names)."""
    try:
        value = json.loads(text)
    except ValueError:
        value = None
    if not isinstance(value, dict) or not value:
        return json.dumps({"unexpected": True})
    return json.dumps({k: ([] if isinstance(v, str) else "not a valid value")
                       for k, v in value.items()})


def _chat(loopback: Loopback, body: dict, text: str, finish: str, prompt_tokens: int,
          completion_tokens: int) -> dict:
    return {"id": f"loopback-{loopback.requests}", "object": "chat.completion",
            "created": int(time.time()), "model": body.get("model", loopback.backend.model_id),
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: the client's pool reuses its connections
    # The headers and the body go out in two writes: with Nagle's algorithm on, the body waits
    # for the client's delayed ACK, and every answer came about 40 ms after its latency.
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's name
        pass  # thousands of requests a minute; the stats say what happened

    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        loopback = self.server.loopback
        if self.path.rstrip("/").endswith("/models"):
            self._json(200, {"object": "list", "data": [
                {"id": loopback.backend.model_id, "object": "model", "owned_by": "loopback"}]})
        elif self.path.rstrip("/").endswith("/loopback/stats"):
            self._json(200, loopback.stats())
        else:
            self._json(404, {"error": {"message": f"no such path {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802
        loopback = self.server.loopback
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._json(404, {"error": {"message": f"no such path {self.path}"}})
            return
        try:
            body = json.loads(raw)
            body["messages"]  # noqa: B018 - a body without messages is a bad request
        except (ValueError, KeyError, TypeError) as exc:
            self._json(400, {"error": {"message": f"bad request body: {exc}"}})
            return
        tag = self.headers.get(TAG_HEADER) or ""
        if tag == PROBE_TAG:  # no episode's call: not counted among them, never faulted
            if loopback.dead:
                self._reset()
            elif not self._refuse_format(loopback, body, probe=True):
                with loopback._lock:
                    loopback.probes += 1
                self._json(200, _chat(loopback, body, "{", "length", 1, 1))
            return
        with loopback._lock:  # the call after the Nth to arrive finds it dead, in flight or not
            loopback.arrived += 1
            if loopback.die_after is not None and loopback.arrived > loopback.die_after:
                loopback.dead = True
            dead = loopback.dead
        if dead:  # a crashed server: no answer, the connection reset
            self._reset()
            return
        if self._refuse_format(loopback, body, probe=False):
            return
        with loopback._lock:
            loopback.request_log.append((self.headers.get(TAG_HEADER) or "",
                                         self.headers.get(AGENT_HEADER) or ""))
        if self._refuse_length(loopback, body):
            return
        if loopback.refuse_chat is not None:
            with loopback._lock:
                loopback.requests += 1
            self._json(loopback.refuse_chat, {"error": {
                "message": f"refused ({loopback.refuse_chat}, injected): the key is not valid",
                "type": "invalid_request_error"}})
            return
        fault = loopback._begin(body, free_text=not body.get("response_format"))
        try:
            self._complete(loopback, body, fault)
        finally:
            loopback._end()
        with loopback._lock:
            loopback.answered += 1
            dies = loopback.die_after is not None and loopback.answered == loopback.die_after
        if dies and loopback.on_death is not None:
            self.wfile.flush()  # the Nth answer is delivered whole before the end
            loopback.on_death()

    def _complete(self, loopback: Loopback, body: dict, fault: str | None) -> None:
        if fault == "reset":
            self._reset()
            return
        if fault == "timeout":
            loopback.sleep(loopback.timeout_sleep_s)
            self.close_connection = True  # the client has long given up on this connection
            return
        loopback.sleep(loopback.latency())
        if fault in ("429", "429_retry_after"):
            headers = {"Retry-After": f"{loopback.retry_after_s:g}"} \
                if fault == "429_retry_after" else {}
            self._json(429, {"error": {"message": "rate limited (injected)",
                                       "type": "rate_limit_exceeded"}}, headers)
            return
        if fault in ("500", "503"):
            self._json(int(fault), {"error": {"message": f"injected {fault}"}})
            return
        text, prompt_tokens, completion_tokens = loopback.answer(
            body, self.headers.get(TAG_HEADER) or "untagged")
        finish = "stop"
        if fault == "malformed":
            text = "Sure! Here is the answer you asked for: {not json, " + text[:20]
        elif fault == "truncated":
            text, finish = text[: max(1, len(text) // 2)], "length"
        elif fault == "off_schema":
            text = _off_schema(text)
        elif fault == "empty":
            text = ""
        if fault is not None:  # the usage says what was sent, as a real server's does
            completion_tokens = len(text.split())
        with loopback._lock:
            loopback.prompt_tokens += prompt_tokens
            loopback.completion_tokens += completion_tokens
        self._json(200, _chat(loopback, body, text, finish, prompt_tokens, completion_tokens))

    def _refuse_length(self, loopback: Loopback, body: dict) -> bool:
        """Refuse a request longer than its context window, in llama-cpp-python's words."""
        if loopback.context_tokens is None:
            return False
        prompt = sum(len(_text(m.get("content")).split()) for m in body["messages"])
        asked = prompt + int(body.get("max_tokens") or 0)
        if asked <= loopback.context_tokens:
            return False
        with loopback._lock:
            loopback.refused_too_long += 1
        self._json(400, {"error": {
            "message": f"This model's maximum context length is {loopback.context_tokens} "
                       f"tokens. However, you requested {asked} tokens ({prompt} in the "
                       f"messages, {asked - prompt} in the completion). Please reduce the "
                       "length of the messages or completion.",
            "type": "invalid_request_error", "param": "messages",
            "code": "context_length_exceeded"}})
        return True

    def _refuse_format(self, loopback: Loopback, body: dict, probe: bool) -> bool:
        """Refuse a response_format it does not take, as llama-cpp-python's server does."""
        given = (body.get("response_format") or {}).get("type", "text")
        if given == "text" or given in loopback.formats:
            return False
        with loopback._lock:
            if probe:
                loopback.probes += 1
            else:
                loopback.refused_formats += 1
        allowed = " or ".join(f"'{f}'" for f in ("text", *loopback.formats))
        self._json(500, {"error": {"message": LLAMA_CPP_REFUSAL.format(allowed=allowed,
                                                                       given=given),
                                   "type": "internal_server_error"}})
        return True

    def _json(self, status: int, payload: dict, headers: dict | None = None) -> None:
        if status >= 400 and self.server.loopback.echo_auth and "error" in payload:
            payload["error"]["message"] += (f" (your request: Authorization: "
                                            f"{self.headers.get('Authorization')})")
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)
        except OSError:
            self.close_connection = True  # the client went away (e.g. after its timeout)

    def _reset(self) -> None:
        """Close with an RST (SO_LINGER 0) instead of an answer, like a crashed proxy."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass  # a reset connection has nothing left to flush


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m sandbox.llm.loopback",
        description="A loopback OpenAI-compatible endpoint answering with a scripted backend "
                    "after a fixed latency, with optional injected faults; for load tests. "
                    "Point a run at it with --model openai/<any name> --base-url <its URL>.",
        epilog="example: python -m sandbox.llm.loopback --script town --latency 0.5 --port 8000"
               "  (then: a suite with --model openai/town --base-url http://127.0.0.1:8000/v1 "
               "--embedder hashing --jobs 16, or sandbox run town_day with the same model)")
    p.add_argument("--script", default="default",
                   help="the scripted backend that answers (scripted/<name>) [default: default]")
    p.add_argument("--latency", type=float, default=0.5, help="seconds per answer [default: 0.5]")
    p.add_argument("--latency-max", type=float, metavar="S",
                   help="draw each answer's latency at random from --latency to S seconds "
                        "(answers come back in every order)")
    p.add_argument("--fault-rate", type=float, default=0.0,
                   help="share of requests that get a fault, 0 to 1 [default: 0]")
    p.add_argument("--faults", default=",".join(FAULT_KINDS),
                   help=f"comma-separated fault kinds to draw from [default: all: "
                        f"{','.join(FAULT_KINDS)}]")
    p.add_argument("--seed", type=int, default=0, help="seed of the fault draws [default: 0]")
    p.add_argument("--refuse-chat", type=int, metavar="STATUS",
                   help="refuse every chat call with this HTTP status, e.g. 401 (a dead key; "
                        "the models list still answers)")
    p.add_argument("--refuse-json-schema", action="store_true",
                   help="refuse a json_schema response_format as llama-cpp-python's server "
                        "does (HTTP 500, a validation error); json_object is taken")
    p.add_argument("--context", type=int, metavar="N",
                   help="refuse a request of more than N tokens (prompt words + max_tokens) as "
                        "llama-cpp-python's server does: 400 context_length_exceeded")
    p.add_argument("--die-after", type=int, metavar="N",
                   help="end the process after answering N chat calls: an endpoint that dies "
                        "during a run")
    p.add_argument("--timeout-sleep", type=float, default=10.0,
                   help="how long a timeout fault holds the request, seconds [default: 10]")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on [default: %(default)s]")
    p.add_argument("--port", type=int, default=8000, help="0 for a free one [default: 8000]")
    args = p.parse_args(argv)
    from . import LLMConfigError

    try:
        server = Loopback(args.script, latency_s=args.latency, latency_max_s=args.latency_max,
                          fault_rate=args.fault_rate,
                          faults=tuple(f.strip() for f in args.faults.split(",") if f.strip()),
                          seed=args.seed, timeout_sleep_s=args.timeout_sleep,
                          refuse_chat=args.refuse_chat, die_after=args.die_after,
                          context_tokens=args.context,
                          formats=("json_object",) if args.refuse_json_schema
                          else RESPONSE_FORMATS, host=args.host, port=args.port)
    except (ValueError, LLMConfigError, OSError) as exc:
        p.exit(2, f"{p.prog}: error: {exc}\n")
    server.on_death = lambda: os._exit(3)  # killed: no statistics, no clean shutdown
    print(f"listening on {server.url}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:  # Ctrl-C is how a user stops it; its statistics follow
        print("stopped", file=sys.stderr, flush=True)
    print(json.dumps(server.stats()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
