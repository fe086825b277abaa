"""Every call's prompt and answer is kept with the run (prompts.jsonl), readable by
`sandbox log RUN --calls`, for a run made whole, resumed in place or forked."""

from __future__ import annotations

import json

import pytest

from sandbox.app.cli import main
from sandbox.log import read_prompts

RUN = ["run", "public_spring_tasting", "--model", "scripted/town", "--embedder", "hashing",
       "--background", "2", "--same-day", "--start", "15:00", "--seed", "1", "--quiet",
       "--checkpoint-every", "30m"]


def cache_answers(run) -> dict[str, str]:
    return {json.loads(line)["key"]: json.loads(line)["text"]
            for line in (run / "llm_cache.jsonl").read_text().splitlines()}


def test_every_call_of_a_run_has_its_prompt_and_answer(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*RUN, "--out", str(out)]) == 0
    calls = [json.loads(line) for line in (out / "calls.jsonl").read_text().splitlines()]
    prompts, problems = read_prompts(out)
    assert not problems and sorted(prompts) == [c["seq"] for c in calls]
    answers = set(cache_answers(out).values())
    for call in calls:
        kept = prompts[call["seq"]]
        assert kept.messages and kept.messages[-1]["content"]
        assert kept.answer in answers  # the answer the cache replays
    capsys.readouterr()
    first = calls[0]
    assert main(["log", str(out), "--calls", str(first["seq"])]) == 0
    shown = capsys.readouterr().out
    assert f"--- call 0: t=0 {first['tag']} {first['agent']}" in shown
    assert prompts[0].messages[0]["content"].splitlines()[0] in shown
    assert "[answer]" in shown and prompts[0].answer in shown
    assert main(["log", str(out), "--calls", "99999"]) == 2


def test_a_fork_from_a_checkpoint_keeps_the_prompts_of_the_calls_it_copied(tmp_path):
    run, fork = tmp_path / "run", tmp_path / "fork"
    assert main([*RUN, "--out", str(run)]) == 0
    assert main(["fork", str(run), "--at", "16:10", "--out", str(fork),
                 "--agent-arch", "Maya Lindqvist=ga"]) == 0
    prompts, problems = read_prompts(fork)
    calls = (fork / "calls.jsonl").read_text().splitlines()
    assert not problems and sorted(prompts) == list(range(len(calls)))
    parent, _ = read_prompts(run)
    copied = json.loads((fork / "header.json").read_text())  # the calls before the fork point
    assert copied["config"]["forks"]
    assert prompts[0] == parent[0]


def _shape(path, shape: str) -> None:
    import os

    path.unlink()
    if shape == "directory":
        path.mkdir()
    elif shape == "FIFO":
        os.mkfifo(path)
    elif shape == "link to /dev/zero":
        path.symlink_to("/dev/zero")
    else:  # over the 4 GiB bound of a run's logs (sparse: no disk taken)
        with open(path, "wb") as sparse:
            sparse.truncate(5 * 2**30)



@pytest.mark.parametrize("shape", ["directory", "FIFO", "link to /dev/zero", "over the bound"])
def test_log_calls_says_what_an_unreadable_prompts_file_is(tmp_path, capsys, shape):
    """Once "missing (a run from before prompts were kept)" for a directory, a FIFO or a link to
    /dev/zero, and a traceback over the size bound: one line saying what it is, exit 2."""
    run = tmp_path / "run"
    assert main(["run", "single_room", "--model", "scripted/default", "--quiet",
                 "--out", str(run)]) == 0
    capsys.readouterr()
    _shape(run / "prompts.jsonl", shape)
    assert main(["log", str(run), "--calls", "1"]) == 2
    printed = capsys.readouterr()
    [line] = printed.err.splitlines()
    assert "prompts.jsonl" in line and "missing" not in line and "Traceback" not in line
    said = {"directory": "a directory", "FIFO": "FIFO", "link to /dev/zero": "character device",
            "over the bound": "more than the"}[shape]
    assert said in line
