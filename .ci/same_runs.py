"""Every run under directory A is the same run as the one at the same place under B: events,
prompts, calls (their timing aside), score (its own directory aside), every checkpoint, byte
for byte, and result.json's warnings (running ahead says there when its rule was broken). CI
runs the STSS table under both schedules (--schedule ahead and lockstep) and holds them to
this. Usage: python .ci/same_runs.py A B"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TIMING = ("latency_s", "prefix_restore_s")  # sandbox.llm.accounting.TIMING


def calls(run: Path) -> list[dict]:
    lines = (run / "calls.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in TIMING} for line in lines]


def score(run: Path) -> dict | None:
    path = run / "score.json"
    if not path.exists():
        return None
    return {k: v for k, v in json.loads(path.read_text()).items() if k != "run"}


def warnings(run: Path) -> list[str] | None:
    path = run / "result.json"
    return json.loads(path.read_text()).get("warnings") if path.exists() else None


def differences(a: Path, b: Path) -> list[str]:
    found = []
    for name in ("events.jsonl", "prompts.jsonl"):
        if (a / name).read_bytes() != (b / name).read_bytes():
            found.append(name)
    if calls(a) != calls(b):
        found.append("calls.jsonl")
    if score(a) != score(b):
        found.append("score.json")
    if warnings(a) != warnings(b):
        found.append(f"result.json's warnings ({warnings(a)} / {warnings(b)})")
    kept_a = sorted(p.name for p in (a / "checkpoints").glob("*.json.gz"))
    kept_b = sorted(p.name for p in (b / "checkpoints").glob("*.json.gz"))
    if kept_a != kept_b:
        found.append("checkpoints (not the same moments)")
    found += [f"checkpoints/{n}" for n in kept_a if n in kept_b
              and (a / "checkpoints" / n).read_bytes() != (b / "checkpoints" / n).read_bytes()]
    return found


def main(a: Path, b: Path) -> int:
    runs = sorted(p.parent.relative_to(a) for p in a.rglob("header.json"))
    if not runs:
        print(f"{a}: no run in it", file=sys.stderr)
        return 1
    bad = 0
    for run in runs:
        if not (b / run / "header.json").exists():
            print(f"{run}: missing under {b}")
            bad += 1
            continue
        found = differences(a / run, b / run)
        if found:
            print(f"{run}: differs in {', '.join(found)}")
            bad += 1
    print(f"{len(runs) - bad} of {len(runs)} runs the same under {a} and {b}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), Path(sys.argv[2])))
