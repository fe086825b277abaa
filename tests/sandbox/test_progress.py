"""A single run says how far it is: simulated time of the whole, calls so far, wall time and
time left, from the first quiet stretch on (not only at each simulated hour)."""

from __future__ import annotations

import io

from rich.console import Console

from sandbox.app.commands.common import print_event
from sandbox.events import Event, Utterance


def test_progress_lines_give_the_share_done_the_calls_and_the_time_left(tmp_path, monkeypatch):
    clock = iter([0.0, 20.0, 40.0, 41.0, 100.0])
    monkeypatch.setattr("sandbox.app.commands.common.time.perf_counter", lambda: next(clock))
    (tmp_path / "calls.jsonl").write_text('{"a": 1}\n{"a": 2}\n{"a": 3}\n')
    out = io.StringIO()
    show = print_event(Console(file=out, width=200), until=4 * 3600, run_dir=tmp_path,
                       every_s=15)
    show(Event(kind="move", t=1800, agent="Ines"))  # 20 s of wall: a line
    said = {"conversation": "c", "turn": 1, "to": ["Dario"]}
    show(Utterance(t=1900, agent="Ines", text="Hello.", **said))  # 40 s: a line, the words
    show(Utterance(t=1950, agent="Dario", text="Hi.", **said))  # 1 s later, same hour: none
    show(Event(kind="move", t=3700, agent="Ines"))  # a new simulated hour
    lines = out.getvalue().splitlines()
    assert lines[0] == "... 0.5 of 4.0 simulated h, 3 calls, 20 s wall, about 2 min left"
    assert lines[1].startswith("... 0.5 of 4.0 simulated h, 3 calls, 40 s wall")
    assert lines[2:4] == ["Ines: Hello.", "Dario: Hi."]
    assert lines[4].startswith("... 1.0 of 4.0 simulated h, 3 calls, 100 s wall, about")
    assert len(lines) == 5


def test_the_first_line_comes_with_the_first_event_not_after_a_quiet_stretch(tmp_path,
                                                                             monkeypatch):
    clock = iter([0.0, 1.5, 2.0, 16.0, 17.0])
    monkeypatch.setattr("sandbox.app.commands.common.time.perf_counter", lambda: next(clock))
    out = io.StringIO()
    show = print_event(Console(file=out, width=200), until=4 * 3600, run_dir=tmp_path,
                       every_s=15)
    show(Event(kind="placed", t=0, agent="Ines"))  # the clock starts: a line at once
    show(Event(kind="placed", t=0, agent="Dario"))  # half a second later: none
    show(Event(kind="plan_made", t=0, agent="Ines"))  # 14.5 s after the first line: none
    show(Event(kind="plan_made", t=0, agent="Dario"))  # 15.5 s after it: one
    assert out.getvalue().splitlines() == ["... 0.0 of 4.0 simulated h, 2 s wall",
                                           "... 0.0 of 4.0 simulated h, 17 s wall"]
