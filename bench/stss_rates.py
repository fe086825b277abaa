"""Refresh the rates `sandbox stss --dry-run` estimates from (tasks/stss/plugin/rates.json):
calls, prompt and answer tokens and latency per simulated resident-hour, per performer
architecture and role, measured on this code by running a small suite.

    .venv/bin/python bench/stss_rates.py                       # scripted town, one template a type
    .venv/bin/python bench/stss_rates.py --model local/smollm2-135m --same-day --start 15:00
    .venv/bin/python bench/stss_rates.py --check runs/suite    # estimate vs actual of a suite

The scripted double makes the calls this code makes (the same agents, prompts and schedule),
so calls and prompt tokens per hour are this code's; its answers are shorter than a model's, so
answer tokens are a floor. `--check SUITE` re-estimates a finished suite's episodes from the
kept rates and prints estimate / actual per role (the issue asks within 25% on calls).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evaluation.stss.scoring import task_of  # noqa: E402
from sandbox.app.suites.estimate import measure, rates_data, read_rates  # noqa: E402
from sandbox.log import load_run  # noqa: E402
from tasks.stss import EpisodeWindow  # noqa: E402
from tasks.stss.plugin.commands import episode_size  # noqa: E402
from tasks.stss.plugin.cost import RATES_FILE, classify  # noqa: E402

ONE_A_TYPE = "public_spring_tasting,appointment_portrait,inviting_pool_game,online_book_club," \
             "help_library_books"


def suite_runs(suite: Path) -> list[tuple[Path, object, str]]:
    """(run directory, its units, architecture directory) of every finished episode of a
    suite, counted as `sandbox stss --dry-run` counts them (episode_size: the planned window
    and the residents), from the task and window its header records."""
    out = []
    for header in sorted(suite.glob("*/*/s*/header.json")):
        run_dir = header.parent
        if not (run_dir / "result.json").is_file():
            continue
        run = load_run(run_dir)
        window = EpisodeWindow(**run.header.config["window"])
        out.append((run_dir, episode_size(task_of(run), window).units, run_dir.parent.name))
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="scripted/town")
    p.add_argument("--templates", default=ONE_A_TYPE)
    p.add_argument("--seeds", default="0")
    p.add_argument("--check", type=Path, help="a finished suite: estimate vs actual")
    p.add_argument("extra", nargs="*", help="more `sandbox stss` options")
    args = p.parse_args()
    if args.check:
        kept = read_rates(RATES_FILE)
        runs = suite_runs(args.check)
        actual = measure(runs, classify)
        for group, roles in actual.items():
            for role, rate in roles.items():
                basis = kept.get(group, {}).get(role)
                if basis is None:
                    print(f"{group} {role}: no kept rate")
                    continue
                guess = basis.per_hour(rate.hours)
                print(f"{group} {role}: calls estimated {guess.calls}, actual {rate.calls} "
                      f"(ratio {guess.calls / rate.calls:.2f}); prompt tokens "
                      f"{guess.prompt_tokens} vs {rate.prompt_tokens} (ratio "
                      f"{guess.prompt_tokens / max(rate.prompt_tokens, 1):.2f})")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "suite"
        command = [sys.executable, "-m", "sandbox.app.cli", "stss", "--model", args.model,
                   "--embedder", "hashing", "--templates", args.templates, "--seeds",
                   args.seeds, "--arch", "ga", "--arch", "ga_tdp", "--out", str(out),
                   *args.extra]
        subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        rates = measure(suite_runs(out), classify)
    RATES_FILE.write_text(json.dumps(rates_data(
        rates, measured=str(date.today()), model=args.model, templates=args.templates,
        seeds=args.seeds, options=args.extra), indent=1) + "\n")
    print(f"wrote {RATES_FILE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
