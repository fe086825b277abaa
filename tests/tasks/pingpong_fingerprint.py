"""What must not change when PingPong moves onto the kit: per run directory, the events, the
header (minus when and by which code it ran), the answer cache and the result status."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HEADER_KEYS = ("scenario", "seed", "start_time", "models", "world", "config")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def fingerprint(bench_dir: Path) -> dict[str, dict[str, str]]:
    runs = {}
    for run_dir in sorted((Path(bench_dir) / "runs").iterdir()):
        header = json.loads((run_dir / "header.json").read_text(encoding="utf-8"))
        kept = {k: header[k] for k in HEADER_KEYS}
        # The command that made the run (recorded since): it names this test's temporary
        # directory, which differs every time; what the kit move must not change is the rest.
        kept["config"] = {k: v for k, v in kept["config"].items() if k != "benchmark_command"}
        runs[run_dir.name] = {
            "events": _sha((run_dir / "events.jsonl").read_bytes()),
            "header": _sha(json.dumps(kept, sort_keys=True).encode()),
            "cache": _sha((run_dir / "llm_cache.jsonl").read_bytes()),
            "status": json.loads((run_dir / "result.json").read_text())["status"],
        }
    return runs
