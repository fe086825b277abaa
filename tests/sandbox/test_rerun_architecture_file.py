"""`sandbox rerun` makes a run again as it ran, or refuses with the reason: an architecture
file edited since the run is not silently read again."""

from __future__ import annotations

import shutil

from agents.architecture import BUILT_IN
from sandbox.app.cli import main


def test_a_rerun_after_the_architecture_file_changed_is_refused_naming_the_change(
        tmp_path, capsys):
    arch = tmp_path / "mine.yaml"
    shutil.copy(BUILT_IN / "ga_tdp.yaml", arch)
    text = arch.read_text().replace("name: ga_tdp", "name: mine")
    arch.write_text(text)
    run = tmp_path / "run"
    assert main(["run", "public_spring_tasting", "--arch", str(arch), "--model", "scripted/town",
                 "--embedder", "hashing", "--background", "2", "--same-day", "--start",
                 "15:00", "--seed", "1", "--quiet", "--out", str(run)]) == 0
    # Unchanged: made again byte for byte.
    assert main(["rerun", str(run), "--out", str(tmp_path / "same"), "--cache-only"]) == 0
    assert (tmp_path / "same" / "events.jsonl").read_bytes() == \
        (run / "events.jsonl").read_bytes()
    capsys.readouterr()
    arch.write_text(text.replace("recency_weight: 0.5", "recency_weight: 1.5"))
    again = tmp_path / "again"
    assert main(["rerun", str(run), "--out", str(again), "--cache-only"]) == 2
    err = capsys.readouterr().err
    assert "cannot be made again as it ran" in err
    assert "retriever.params.recency_weight differs now (0.5 when it ran, 1.5 now)" in err
    assert not (again / "events.jsonl").exists()  # refused before anything ran
    # ... and nothing written for it: before, RUN's cache was copied into the new directory
    # before the refusal and left there.
    assert not again.exists()
    (tmp_path / "empty").mkdir()
    assert main(["rerun", str(run), "--out", str(tmp_path / "empty"), "--cache-only"]) == 2
    assert list((tmp_path / "empty").iterdir()) == []
