"""The tokens a real server billed against the tokens the project counted (issue 58 point 3).

Two llama-cpp-python servers (`python -m llama_cpp.server`, each with an API key drawn here and
in no file) on the shipped SmolLM2 GGUF, each behind a small counting proxy of this script that
adds up the `usage` of every chat answer the server gave (what it bills: a judge answer cut at
max_tokens and asked again is two answers). A PingPong run through a models file with no
json_dialect line: player and interrogator on A, judge on B. Then, per server: its own count
beside calls.jsonl's (every attempt's tokens) and the board's "Calls and tokens per role".
The dialect probe (one per server, a one-token call) is the only answer the run does not count.

    .venv/bin/python bench/server_tokens.py                 # 5 pairs (--every 13)
    .venv/bin/python bench/server_tokens.py --every 64      # 2 pairs, a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SANDBOX = [sys.executable, "-m", "sandbox.app.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class CountingProxy:
    """Forwards every request to `upstream` and adds up the usage of each chat answer it
    passes back (status 200): the server's own count of what it answered."""

    def __init__(self, upstream: str):
        self.upstream = upstream
        self.counts: Counter = Counter()
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _forward(self, body: bytes | None) -> None:
                request = urllib.request.Request(
                    proxy.upstream + self.path, data=body, method=self.command,
                    headers={k: v for k, v in self.headers.items()
                             if k.lower() not in ("host", "content-length")})
                try:
                    with urllib.request.urlopen(request, timeout=600) as answer:
                        status, data, kind = answer.status, answer.read(), \
                            answer.headers.get("Content-Type", "application/json")
                except urllib.error.HTTPError as exc:
                    status, data, kind = exc.code, exc.read(), \
                        exc.headers.get("Content-Type", "application/json")
                if status == 200 and self.path.endswith("/chat/completions"):
                    usage = json.loads(data).get("usage") or {}
                    with proxy.lock:
                        proxy.counts["answers"] += 1
                        proxy.counts["prompt_tokens"] += usage.get("prompt_tokens", 0)
                        proxy.counts["completion_tokens"] += usage.get("completion_tokens", 0)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):  # noqa: N802 (http.server's name)
                self._forward(None)

            def do_POST(self):  # noqa: N802
                self._forward(self.rfile.read(int(self.headers.get("Content-Length", 0))))

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def start_server(name: str, key: str, folder: Path) -> tuple[subprocess.Popen, str]:
    """A llama.cpp server on the shipped GGUF with `key`; (its process, its base URL)."""
    from sandbox.llm.local import embedded_model_path

    port = free_port()
    log = (folder / f"server-{name}.log").open("a")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model",
         str(embedded_model_path("smollm2-135m")), "--model_alias", f"smol{name}",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", "1",
         "--n_threads_batch", "1", "--verbose", "False", "--api_key", key],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server {name} did not start: see {log.name}")
        try:
            urllib.request.urlopen(urllib.request.Request(
                f"{url}/v1/models", headers={"Authorization": f"Bearer {key}"}), timeout=2)
            return proc, url
        except OSError:
            if time.monotonic() > deadline:
                raise SystemExit(f"server {name} did not answer within 120 s") from None
            time.sleep(0.3)


def counted(out: Path) -> dict[str, Counter]:
    """endpoint alias -> calls, answers (attempts), tokens over every calls.jsonl of `out`."""
    found: dict[str, Counter] = {}
    for path in sorted(out.rglob("calls.jsonl")):
        for line in path.read_text().splitlines():
            call = json.loads(line)
            if call.get("cached"):
                continue
            row = found.setdefault(call.get("endpoint") or "-", Counter())
            row["calls"] += 1
            row["answers"] += call.get("attempts", 1)
            row["prompt_tokens"] += call["prompt_tokens"]
            row["completion_tokens"] += call["completion_tokens"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=13)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="server-tokens-"))
    keys = {name: f"sk-{name}-{secrets.token_hex(12)}" for name in "AB"}
    procs, proxies = [], {}
    try:
        for name in "AB":
            proc, url = start_server(name, keys[name], folder)
            procs.append(proc)
            proxies[name] = CountingProxy(url)
        models = folder / "models.yaml"
        models.write_text(yaml.safe_dump({
            name: {"model": f"openai/smol{name}", "base_url": proxies[name].url + "/v1",
                   "key_env": f"KEY_{name}"} for name in "AB"}))
        env = {**os.environ, "KEY_A": keys["A"], "KEY_B": keys["B"],
               "SANDBOX_LLM_THREADS": "1"}
        out = folder / "pp"
        argv = [*SANDBOX, "pingpong", "--models", str(models), "--player", "A",
                "--interrogator", "A", "--judge", "B", "--every", str(args.every),
                "--player-max-tokens", "40", "--interrogator-max-tokens", "30",
                "--out", str(out)]
        print("$", " ".join(argv[2:]), flush=True)
        started = time.monotonic()
        run = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True)
        print(f"rc {run.returncode} in {time.monotonic() - started:.0f} s; stderr: "
              f"{run.stderr.strip()[-400:]}")
        board = subprocess.run([*SANDBOX, "pingpong-board", str(out)], cwd=ROOT,
                               capture_output=True, text=True).stdout
        print("\n".join(line for line in board.splitlines()
                        if "| player |" in line or "| interrogator |" in line
                        or "| judge |" in line or "Tokens in" in line))
        ours = counted(out)
        print("\n| endpoint | server answers | server in | server out | calls | answers "
              "(calls.jsonl) | in (calls.jsonl) | out (calls.jsonl) |")
        print("|---|--:|--:|--:|--:|--:|--:|--:|")
        for name in "AB":
            server, row = proxies[name].counts, ours.get(name, Counter())
            print(f"| {name} | {server['answers']} | {server['prompt_tokens']} | "
                  f"{server['completion_tokens']} | {row['calls']} | {row['answers']} | "
                  f"{row['prompt_tokens']} | {row['completion_tokens']} |")
        print("(each server's count includes its one-token dialect probe)")
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=20)


if __name__ == "__main__":
    main()
