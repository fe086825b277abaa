"""How long `sandbox export` takes and what it writes, per format, on a finished run set.

    .venv/bin/python bench/export.py runs/suite180         # units and calls, csv/jsonl/parquet
    .venv/bin/python bench/export.py runs/suite180 --inspect

Each export runs as its own `sandbox export` process (its imports counted, as a user pays
them); prints rows, wall seconds and bytes. Parquet needs the `data` extra, --inspect the
`inspect` extra. A 180-episode suite: `sandbox stss --model scripted/town --embedder hashing
--seeds 0..2 --rules both --out runs/suite180`.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WROTE = re.compile(r"Wrote (\d+)")
SANDBOX = str(Path(sys.executable).with_name("sandbox"))


def timed(args: list[str]) -> tuple[float, str]:
    started = time.monotonic()
    done = subprocess.run([SANDBOX, "export", *args], capture_output=True, text=True,
                          check=True)
    return time.monotonic() - started, done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="+")
    parser.add_argument("--inspect", action="store_true", help="also time the Inspect logs")
    args = parser.parse_args()
    print("| table | format | rows written | seconds | bytes |\n|---|---|--:|--:|--:|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind, extra in (("units", []), ("calls", ["--calls"])):
            for suffix in ("csv", "jsonl", "parquet"):
                out = Path(tmp) / f"{kind}.{suffix}"
                seconds, said = timed([*args.dirs, *extra, "--out", str(out)])
                rows = WROTE.search(said).group(1)
                print(f"| {kind} | .{suffix} | {rows} | {seconds:.1f} | "
                      f"{out.stat().st_size:,} |")
        if args.inspect:
            logs = Path(tmp) / "logs"
            seconds, said = timed([*args.dirs, "--inspect", str(logs)])
            size = sum(p.stat().st_size for p in logs.iterdir())
            logs_written = WROTE.search(said).group(1)
            print(f"| samples | Inspect logs | {logs_written} log(s) | {seconds:.1f} | "
                  f"{size:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
