"""The API key is never written: a sentinel key in OPENAI_API_KEY, an STSS episode through the
real openai backend against the loopback endpoint whose error answers echo the request's
Authorization header (as some proxies do), faults of every kind, calls that give up and fall
back; then every file of the run directory (cache included), the logs, the console and the
exported replay frames with their metadata are searched for the key."""

from __future__ import annotations

import logging
import uuid

import pytest
from PIL import Image

from sandbox.app.cli import main
from sandbox.llm import LLMRequest, LLMSettings, Message, make_llm
from sandbox.llm.loopback import Loopback
from sandbox.log import CACHE
from tasks.stss import TEMPLATES_DIR, EpisodeWindow
from tasks.stss.plugin.suite import run_task
from worlds import load_world


def test_the_api_key_appears_in_no_file_log_or_frame(tmp_path, monkeypatch, capsys):
    key = f"sk-sentinel-{uuid.uuid4().hex}"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    monkeypatch.chdir(tmp_path)
    logs = tmp_path / "sandbox.log"
    handler = logging.FileHandler(logs, encoding="utf-8")
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)  # retries, repairs, the HTTP client's own
    run_dir = tmp_path / "run"
    try:
        with Loopback("town", fault_rate=0.5, seed=7, timeout_sleep_s=1.0, echo_auth=True) \
                as server:
            settings = dict(model="openai/town", base_url=server.url, timeout_s=0.3,
                            retry_attempts=2, retry_initial_wait_s=0.001)
            # A call whose every attempt is refused: its fallback must not carry the message.
            with Loopback("town", fault_rate=1.0, faults=("429",), echo_auth=True) as refusing:
                gave_up = make_llm(LLMSettings(**{**settings, "base_url": refusing.url}))
                answer = gave_up.complete(LLMRequest(
                    messages=[Message(role="user", content="hi")], tag="chat.turn"))
            assert "unavailable" in answer.faults and key not in answer.text
            result, _ = run_task(
                TEMPLATES_DIR / "public_spring_tasting.yaml", load_world("town"),
                lambda out, _performer: make_llm(LLMSettings(**settings, cache_path=out / CACHE)),
                architecture="ga", seed=1, out=run_dir, background=2, embedder="hashing",
                window=EpisodeWindow(same_day=True, start="15:00"))
            injected = server.stats()["faults"]
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    # Ran to its end (a call whose retries all failed makes it "unavailable": not finished,
    # the next run asks again; what matters here is where the key went)
    assert result.status in ("completed", "unavailable") and result.sim_time_s > 0
    assert sum(injected.values()) >= 10 and {"429", "429_retry_after"} & set(injected)
    assert "Authorization: Bearer" in logs.read_text(encoding="utf-8")  # the echo was logged

    frames = tmp_path / "frames"
    assert main(["-v", "replay", str(run_dir), "--export", str(frames), "--every", "3h"]) == 0
    assert main(["-v", "log", str(run_dir)]) == 0
    printed = capsys.readouterr()

    files = [p for p in [*run_dir.rglob("*"), *frames.rglob("*")] if p.is_file()]
    assert any(p.suffix == ".png" for p in files) and any(p.name == CACHE for p in files)
    for path in files:
        assert key.encode() not in path.read_bytes(), path
        if path.suffix == ".png":
            with Image.open(path) as image:
                assert key not in repr(image.info), path
    assert key not in printed.out + printed.err
    assert key not in logs.read_text(encoding="utf-8")


def _searchable(root):
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.mark.parametrize("shape", [
    "http://user:{key}@{host}/v1",
    "http://{key}@{host}/v1",
    "http://{host}/v1?api-key={key}",
    "http://{host}/v1?key={key}",
    "http://{host}/v1?token={key}&x=1",
])
def test_a_credential_in_the_base_url_appears_nowhere(shape, tmp_path, monkeypatch, capsys):
    """A run that fails against an endpoint whose URL carries the key (refused: a dead key), and
    one that cannot reach it at all: the key is in no output, log line or file."""
    key = f"sk-url-{uuid.uuid4().hex}"
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    logs = tmp_path / "sandbox.log"
    handler = logging.FileHandler(logs, encoding="utf-8")
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.DEBUG)  # the HTTP client logs every request's URL
    try:
        with Loopback("default", refuse_chat=401, echo_auth=True) as server:
            host = server.url.split("//")[1].split("/")[0]
            url = shape.format(key=key, host=host)
            refused = main(["-v", "run", "single_room", "--model", "openai/default",
                            "--base-url", url, "--quiet", "--out", str(tmp_path / "run")])
        closed = main(["-v", "run", "single_room", "--model", "openai/default", "--base-url",
                       shape.format(key=key, host="127.0.0.1:9"), "--out",
                       str(tmp_path / "never")])
    finally:
        logging.getLogger().removeHandler(handler)
        handler.close()
    printed = capsys.readouterr()
    # Refused: a run gone unavailable (1), or, where the URL's query hides the models list, the
    # key refused by the dialect's test call before the run starts (2).
    assert refused in (1, 2) and closed == 2
    assert "cannot reach the LLM endpoint" in printed.err and "***" in printed.err
    assert key not in printed.out + printed.err
    assert key not in logs.read_text(encoding="utf-8")
    files = _searchable(tmp_path)
    assert refused == 2 or any(p.name == "result.json" for p in files)
    for path in files:
        assert key.encode() not in path.read_bytes(), path


def test_the_lock_names_its_command_without_credentials(monkeypatch):
    from sandbox.lock import command_line

    monkeypatch.setattr("sys.argv", ["/venv/bin/sandbox", "run", "x", "--base-url",
                                     "http://me:sk-hidden-1234@host/v1?api-key=sk-other-5678"])
    shown = command_line()
    assert shown.startswith("sandbox run x --base-url http://***@host/v1?api-key=***")
    assert "sk-hidden" not in shown and "sk-other" not in shown


def test_a_user_name_or_a_short_value_is_masked_in_urls_only():
    from sandbox.redact import redact, redact_url

    assert redact_url("http://user:pw@host/v1?key=abc") == "http://***@host/v1?key=***"
    assert redact("the user agent's key: abc") == "the user agent's key: abc"


TOWN = ["--embedder", "hashing", "--background", "2", "--same-day", "--start", "15:00"]
RECORDING = {  # every command that records its command line in what it writes
    "pingpong": ["pingpong", "--player", "scripted/pingpong", "--interrogator",
                 "scripted/pingpong", "--judge", "scripted/pingpong", "--every", "32"],
    "refutebench": ["refutebench", "--model", "scripted/refutebench", "--refuter",
                    "scripted/refutebench", "--judge", "scripted/refutebench", "--every", "40"],
    "simulbench-collect": ["simulbench-collect", "--user", "scripted/simulbench", "--simulator",
                           "scripted/simulbench", "--judge", "scripted/simulbench", "--every",
                           "60"],
    "stss-lang": ["stss-lang", "--arch", "ga", "--model", "scripted/stss-lang", "--judge",
                  "scripted/stss-lang", "--every", "67"],
    "stss": ["stss", "--templates", "public_spring_tasting", "--arch", "ga", "--model",
             "scripted/town", *TOWN],
    "run": ["run", "public_spring_tasting", "--model", "scripted/town", *TOWN],
}


@pytest.mark.parametrize("command", sorted(RECORDING))
@pytest.mark.parametrize("shape", ["http://user:{key}@host.invalid/v1",
                                   "http://host.invalid/v1?api_key={key}"])
def test_a_recorded_command_keeps_no_credential(command, shape, tmp_path, monkeypatch, capsys):
    """Each item's header records the command that made it (`command`, `benchmark_command`):
    every file the command writes is searched for the password given in --base-url."""
    from sandbox.llm import SCRIPTS
    from tasks.stss_lang.scripted import stss_lang_backend

    monkeypatch.setitem(SCRIPTS, "stss-lang", stss_lang_backend)
    monkeypatch.chdir(tmp_path)
    key = f"pw-{uuid.uuid4().hex}"
    out = tmp_path / "out"
    assert main([*RECORDING[command], "--base-url", shape.format(key=key),
                 "--out", str(out)]) == 0
    printed = capsys.readouterr()
    headers = list(out.rglob("header.json"))
    assert headers and all("***" in p.read_text(encoding="utf-8") for p in headers)
    for path in _searchable(tmp_path):
        assert key.encode() not in path.read_bytes(), path
    assert key not in printed.out + printed.err


def test_a_refused_url_is_echoed_without_its_password(capsys):
    """A URL refused for its scheme is shown back in the error, its credentials masked."""
    key = f"pw-{uuid.uuid4().hex}"
    assert main(["pingpong", "--player", "scripted/pingpong", "--out", "x",
                 "--base-url", f"htp://user:{key}@host/v1"]) == 2
    err = capsys.readouterr().err
    assert "htp://***@host/v1" in err and key not in err
