"""Refresh the rates a single-room benchmark's `--dry-run` estimates from before the first item
of a directory is finished (the plug-in's rates.json, `Benchmark.rates`): calls, prompt and
answer tokens and latency per item and role, kept per set of the benchmark's options, measured
on this code by running the benchmark with the models given (its scripted ones).

    .venv/bin/python bench/kit_rates.py pingpong --player scripted/pingpong \
        --interrogator scripted/pingpong --judge scripted/pingpong --every 8
    .venv/bin/python bench/kit_rates.py refutebench --model scripted/refutebench \
        --refuter scripted/refutebench --judge scripted/refutebench --every 9
    .venv/bin/python bench/kit_rates.py stss-lang --model scripted/stss-lang \
        --judge scripted/stss-lang --every 8          # the built-in set, ga and ga_tdp

The scripted doubles make the calls this code makes (the same turns, refutations, judges), so
calls per item are this code's; their answers are shorter than a model's, so answer tokens are
a floor. A benchmark run with other options (RefuteBench's --setting persistent) is measured
into its own entry beside the others.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sandbox.app.plugins import plugins  # noqa: E402
from sandbox.app.suites.benchmark import RUNS  # noqa: E402
from sandbox.app.suites.estimate import measured_rates, rates_key  # noqa: E402
from sandbox.app.suites.resume import finished  # noqa: E402
from tasks.stss_lang.plugin import STSS_LANG  # noqa: E402

# Single-room benchmarks run by a command of their plug-in's own, not the kit's.
OWN_COMMAND = {"stss-lang": STSS_LANG}


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 2
    name, args = sys.argv[1], sys.argv[2:]
    bench = next((b for p in plugins() for b in p.benchmarks if b.name == name), None) \
        or OWN_COMMAND.get(name)
    if bench is None or bench.rates is None:
        print(f"{name}: no single-room benchmark of that name keeps rates", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench"
        command = [sys.executable, "-m", "sandbox.app.cli", name, *args, "--out", str(out)]
        if subprocess.run(command, cwd=ROOT, stdout=subprocess.DEVNULL).returncode != 0:
            print(f"sandbox {name} failed: nothing written", file=sys.stderr)
            return 1
        data = json.loads(bench.rates.read_text()) if bench.rates.is_file() else {}
        models = [a for flag, a in zip(args, args[1:], strict=False) if flag.startswith("--")
                  and "scripted/" in a]
        # One manifest a configuration: OUT itself, or one directory each (stss-lang's --arch).
        for manifest in sorted(out.rglob(bench.manifest_file)):
            options = json.loads(manifest.read_text())["options"]
            done = sorted(d for d in (manifest.parent / RUNS).iterdir() if finished(d))
            rates = measured_rates(bench, done)
            key = rates_key(options)
            data.setdefault("rates", {})[key] = {role: r.data() for role, r in rates.items()}
            data.setdefault("models", {})[key] = ", ".join(dict.fromkeys(models))
            data.setdefault("measured", {})[key] = str(date.today())
            print(f"{bench.rates}: {key}, {len(done)} {bench.noun}: " + ", ".join(
                f"{role} {rate.calls / rate.hours:.1f} calls" for role, rate in rates.items()))
    bench.rates.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
