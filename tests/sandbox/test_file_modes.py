"""Results are readable as the umask says: a colleague on a shared filesystem reads a run's
score.json, result.json and header.json as they read its events.jsonl (the atomic writer's
temporary file is 0600 whatever the umask; it must not stay so once renamed)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest


def _modes(run_dir: Path) -> dict[str, int]:
    return {p.name: stat.S_IMODE(p.stat().st_mode) for p in run_dir.iterdir() if p.is_file()
            and not p.name.startswith(".")}


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_every_file_of_a_run_has_the_mode_the_umask_gives(tmp_path, umask, mode):
    out = tmp_path / "run"
    code = (f"import os, sys; os.umask({umask}); from sandbox.app.cli import main; "
            f"sys.exit(main(['run', 'single_room', '--model', 'scripted/default', '--quiet', "
            f"'--out', {str(out)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 0, done.stderr
    modes = _modes(out)
    assert {"header.json", "result.json", "events.jsonl"} <= set(modes)
    assert {name: m for name, m in modes.items() if m != mode} == {}
