"""Interviews of the agents of finished runs (`sandbox interview`, `sandbox interview-set`), on
small scripted town runs made here: each answer recalls only what the agent had by the moment
asked, is cached outside the run (which stays byte for byte as it was), and a set over three
architectures is judged and boarded per architecture x category."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from sandbox.app.cli import main
from sandbox.interviews import answer_files, load_answer
from sandbox.llm import SCRIPTS, ScriptedBackend
from sandbox.simtime import MomentError, parse_moment

ARCHITECTURES = ("ga", "ga_tdp", "ga_no_reflection")
CATEGORIES = ("self-knowledge", "memory", "plans", "reactions", "reflections")
AGNES = "Agnes Whitfield"
# town_day's own file changes the reflector's threshold, which ga_no_reflection has not.
TOWN = "world: town\narchitecture: ga\nstart_time: 2024-02-13T06:00:00\nhours: 2\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """A two-hour scripted town day of three residents under each architecture, same seed."""
    base = tmp_path_factory.mktemp("runs")
    (base / "town.yaml").write_text(TOWN)
    made = {}
    for arch in ARCHITECTURES:
        made[arch] = base / arch
        assert main(["run", "town_day", "--config", str(base / "town.yaml"), "--model",
                     "scripted/town", "--embedder", "hashing", "--architecture", arch,
                     "--residents", "3", "--hours", "2", "--seed", "0", "--out",
                     str(made[arch]), "--quiet"]) == 0
    return made


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def interview(run: Path, out: Path, *args: str) -> int:
    return main(["interview", str(run), "--agent", AGNES, "--model", "scripted/town",
                 "--out", str(out), *args])


def test_an_interview_recalls_only_what_the_agent_had_at_the_moment_asked(runs, tmp_path):
    question = "What have you done so far today?"
    recalled = {}
    for at, seconds in (("06:45", 2700.0), ("day 1 08:00", 7200.0)):
        out = tmp_path / at.replace(" ", "_")
        assert interview(runs["ga"], out, "--at", at, question) == 0
        (path,) = answer_files(out)
        answer = load_answer(path)
        assert answer.at == seconds and answer.question == question
        assert answer.memories, "nothing recalled"
        assert all(m.created <= seconds for m in answer.memories)
        recalled[at] = {(m.created, m.description) for m in answer.memories}
    early, late = recalled.values()
    assert early != late
    assert early < late  # the later moment adds memories made in between
    assert any(created > 2700 for created, _ in late - early)


def test_the_same_question_again_is_answered_from_the_cache_and_the_run_is_unchanged(
        runs, tmp_path, capsys):
    before = hashes(runs["ga"])
    cache = tmp_path / "cache.jsonl"
    args = ["interview", str(runs["ga"]), "--agent", AGNES, "--model", "scripted/town",
            "--cache", str(cache), "--at", "07:30", "What are you going to do next?"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    second = capsys.readouterr().out
    answer = [line for line in first.splitlines() if line.startswith("A: ")]
    assert len(answer) == 1 and "[from the cache]" not in answer[0]
    assert f"{answer[0]} [from the cache]" in second.splitlines()
    # kept by state: no call, no agent rebuilt (so no embedder loaded for its retrieval)
    assert "0 call(s) (0 from the cache), 1 answer(s) kept from before" in second
    assert hashes(runs["ga"]) == before  # nothing written into the run, nothing added to it
    assert cache.is_file()


def test_nothing_is_written_into_the_run(runs, capsys):
    assert interview(runs["ga"], runs["ga"] / "answers", "Hello?") == 2
    assert "nothing is written into a run" in capsys.readouterr().err
    assert not (runs["ga"] / "answers").exists()


def test_a_misspelt_agent_or_a_moment_outside_the_run_is_one_line(runs, capsys):
    assert main(["interview", str(runs["ga"]), "--agent", "Agnes Witfield", "Hi?"]) == 2
    assert "did you mean Agnes Whitfield?" in capsys.readouterr().err
    assert main(["interview", str(runs["ga"]), "--agent", AGNES, "--at", "09:00", "Hi?"]) == 2
    assert "after the run's end" in capsys.readouterr().err


def test_an_interview_set_over_three_architectures_boards_each_category(runs, tmp_path,
                                                                        capsys):
    out, board = tmp_path / "set", tmp_path / "board.json"
    args = ["interview-set", *(str(runs[a]) for a in ARCHITECTURES), "--model",
            "scripted/town", "--judge", "scripted/town", "--out", str(out), "--json",
            str(board)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    rows = json.loads(board.read_text())["rows"]
    assert {(r["architecture"], r["category"]) for r in rows} == \
        {(a, c) for a in ARCHITECTURES for c in (*CATEGORIES, "all")}
    for row in rows:
        assert row["n"] == (45 if row["category"] == "all" else 9)  # 3 agents x 3 questions
        # 3 agents, the unit resampled first: too few for an interval, and said why
        assert row["agents"] == 3 and row["ci"] is None
        assert f"| {row['architecture']} | {row['category']} | {row['rating']:.2f} |" in printed
    assert "no interval below 5 independent units" in printed
    assert json.loads(board.read_text())["test_double"] == ["scripted/town"]
    assert len(answer_files(out)) == 135
    assert "ga_no_reflection: 45 selected: 45 answered; judgments: 45 usable" in printed
    # Resumed: every answer and judgment kept, the same board.
    assert main(args) == 0
    again = capsys.readouterr().out
    assert "answers: 0 asked, 135 kept" in again and "judgments: 0 made, 135 kept" in again
    assert json.loads(board.read_text())["rows"] == rows
    assert main(["interview-board", str(out)]) == 0
    assert "| ga_tdp | plans |" in capsys.readouterr().out
    # Two architectures of the set compared: matched by agent and question, agents resampled.
    diff = tmp_path / "diff.json"
    assert main(["compare", f"{out}:ga", f"{out}:ga_tdp", "--json", str(diff)]) == 0
    compared = json.loads(diff.read_text())
    assert compared["overall"]["n"] == 45 and compared["overall"]["units"] == 3
    assert compared["unit"] == "agent" and compared["overall"]["ci"] is None  # 3 agents
    assert set(compared["by_type"]) == set(CATEGORIES)
    assert compared["a_only"] == compared["b_only"] == []
    assert main(["compare", str(out), f"{out}:ga"]) == 2  # which architecture: said
    assert "holds 3 archs" in capsys.readouterr().err


def test_a_judge_without_a_usable_answer_is_counted_not_averaged(runs, tmp_path, capsys,
                                                                 monkeypatch):
    monkeypatch.setitem(SCRIPTS, "mute-judge", lambda: ScriptedBackend(
        {"interview.judge": lambda request: "I would rather not say."},
        model_id="scripted/mute-judge"))
    questions = tmp_path / "questions.yaml"
    questions.write_text("format: interview-questions\nversion: 1\nquestions:\n"
                         "  - {id: next, category: plans, text: 'What is next for you?'}\n")
    out, board = tmp_path / "set", tmp_path / "board.json"
    assert main(["interview-set", str(runs["ga"]), "--questions", str(questions), "--model",
                 "scripted/town", "--judge", "scripted/mute-judge", "--out", str(out),
                 "--json", str(board)]) == 0
    printed = capsys.readouterr().out
    data = json.loads(board.read_text())
    assert data["fallbacks"] == 3
    assert all(r["n"] == 0 and r["rating"] is None for r in data["rows"])
    assert "judgments: 0 usable, 3 fallback" in printed


def test_a_moment_is_read_as_a_clock_time_a_day_and_time_or_seconds():
    from datetime import datetime

    start, end = datetime(2024, 2, 13, 6, 0), 26 * 3600.0  # until 08:00 the next day
    assert parse_moment(None, start, end) == end
    assert parse_moment("07:30", start, end) == 1.5 * 3600  # the first 07:30 after the start
    assert parse_moment("day 2 07:30", start, end) == 25.5 * 3600
    assert parse_moment("day 1 07:30", start, end) == 1.5 * 3600
    assert parse_moment("5400", start, end) == parse_moment("5400s", start, end) == 5400
    assert parse_moment("+1h30m", start, end) == parse_moment("2024-02-13 07:30", start,
                                                              end) == 5400
    for bad in ("day 1 05:00", "day 2 09:00", "noon", "24:00", "day 0 07:00"):
        with pytest.raises(MomentError):
            parse_moment(bad, start, end)


@pytest.mark.parametrize("questions, reason", [
    ("  - {id: a, text: 'Who is {friend}?'}\n", "questions.0.text: Value error, unknown "
                                                 "placeholder {friend}"),
    ("  - {id: a, text: 'Hi?'}\n  - {id: a, text: 'Bye?'}\n", "questions.1.id: id 'a' is also "
                                                              "question 0's")])
def test_a_bad_question_file_is_one_line_naming_the_field(runs, tmp_path, capsys, questions,
                                                          reason):
    path = tmp_path / "questions.yaml"
    path.write_text("format: interview-questions\nversion: 1\nquestions:\n" + questions)
    assert main(["interview", str(runs["ga"]), "--agent", AGNES, "--questions", str(path),
                 "--model", "scripted/town", "--cache", str(tmp_path / "cache.jsonl")]) == 2
    err = capsys.readouterr().err
    assert reason in err and str(path) in err and len(err.strip().splitlines()) == 1


def test_an_agent_whose_world_no_longer_loads_answers_with_a_warning(runs, tmp_path, capsys):
    """The run's world is gone (renamed, a later version that does not load): the agent is
    interviewed from its log with a bare persona, and the command says so."""
    import shutil

    run = tmp_path / "moved"
    shutil.copytree(runs["ga"], run)
    header = json.loads((run / "header.json").read_text())
    header["config"]["world"] = "no_such_world"
    header["world"] = "no_such_world"
    (run / "header.json").write_text(json.dumps(header))
    assert interview(run, tmp_path / "out", "Who are you?") == 0
    printed = capsys.readouterr().out
    assert f"warning: {AGNES} answers with a bare persona" in printed
    assert "world 'no_such_world' does not load" in printed
    (path,) = answer_files(tmp_path / "out")
    assert load_answer(path).answer


def test_a_run_made_with_an_architecture_file_is_interviewed_on_the_run_s_own_model(
        tmp_path, capsys):
    # The file's `name:` differs from its path: agent_joined names the one, the header keys
    # the recorded modules by the other.
    ga = Path(__file__).parents[2] / "agents" / "architectures" / "ga.yaml"
    arch = tmp_path / "mine.yaml"
    arch.write_text(ga.read_text().replace("name: ga\n", "name: ga_imp\n"))
    (tmp_path / "town.yaml").write_text(TOWN)
    run = tmp_path / "run"
    assert main(["run", "town_day", "--config", str(tmp_path / "town.yaml"), "--model",
                 "scripted/town", "--embedder", "hashing", "--architecture", str(arch),
                 "--residents", "2", "--hours", "1", "--seed", "0", "--out", str(run),
                 "--quiet"]) == 0
    capsys.readouterr()
    # No --model: the run's own (scripted/town), never the embedded model.
    assert main(["interview", str(run), "--agent", AGNES, "--no-cache", "Hello?"]) == 0
    out = capsys.readouterr().out
    assert f"{AGNES} (ga_imp)" in out and "answering with scripted/town" in out
    assert "\nA: " in out


def test_a_clock_time_before_the_run_s_start_says_so(runs, capsys):
    # The run starts at 06:00 and lasts two hours: 05:00 is before it, not after its end.
    assert main(["interview", str(runs["ga"]), "--agent", AGNES, "--at", "05:00", "Hi?"]) == 2
    err = capsys.readouterr().err
    assert "'05:00' is before the run started" in err and len(err.strip().splitlines()) == 1


def test_an_agent_is_rebuilt_once_for_many_questions_and_not_at_all_for_kept_ones(
        runs, tmp_path, capsys, monkeypatch):
    from agents import frozen

    built = []
    real = frozen.FrozenAgent.rebuild
    monkeypatch.setattr(frozen.FrozenAgent, "rebuild",
                        lambda self: built.append(self.name) or real(self))
    args = ["interview", str(runs["ga"]), "--agent", AGNES, "--cache", str(tmp_path / "c.jsonl"),
            "--at", "07:30", "What are you doing?", "Who did you see today?", "Any plans?"]
    assert main(args) == 0
    assert built == [AGNES]  # one rebuild, three questions
    first = [line for line in capsys.readouterr().out.splitlines() if line.startswith("A: ")]
    assert main(args) == 0
    assert built == [AGNES]  # every answer kept: nothing rebuilt, no embedder needed
    again = [line for line in capsys.readouterr().out.splitlines() if line.startswith("A: ")]
    assert again == [f"{line} [from the cache]" for line in first]


def test_follow_up_questions_see_the_conversation_so_far(runs, tmp_path, capsys, monkeypatch):
    seen = []
    real = SCRIPTS["town"]

    def recording():
        backend = real()
        complete = backend.complete
        backend.complete = lambda request: seen.append(request.messages) or complete(request)
        return backend

    monkeypatch.setitem(SCRIPTS, "town", recording)
    assert main(["interview", str(runs["ga"]), "--agent", AGNES, "--no-cache", "--chat",
                 "What are you doing?", "Why that?"]) == 0
    out = capsys.readouterr().out
    assert "Q: What are you doing?" in out and "Q (follow-up): Why that?" in out
    said = [line.removeprefix("A: ") for line in out.splitlines() if line.startswith("A: ")]
    asked = [m for m in seen if m[-1].content == "Why that?"][0]
    assert [(m.role, m.content) for m in asked[1:]] == [
        ("user", "What are you doing?"), ("assistant", said[0]), ("user", "Why that?")]


def test_a_question_file_s_thread_is_one_conversation(runs, tmp_path, capsys):
    questions = tmp_path / "q.yaml"
    questions.write_text(yaml.safe_dump({"questions": [
        {"id": "doing", "text": "What are you doing?", "thread": "t"},
        {"id": "why", "text": "Why?", "thread": "t"},
        {"id": "alone", "text": "Why?"}]}))
    assert main(["interview", str(runs["ga"]), "--agent", AGNES, "--no-cache", "--questions",
                 str(questions), "--out", str(tmp_path / "out")]) == 0
    states = {load_answer(p).question_id: load_answer(p).state
              for p in answer_files(tmp_path / "out")}
    assert states["why"] != states["alone"]  # the same words, after a conversation
    assert "Q (follow-up): Why?" in capsys.readouterr().out
