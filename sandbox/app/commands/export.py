"""`sandbox export DIR... --out FILE | --inspect LOGDIR`: results as data (evaluation/export)."""

from __future__ import annotations

import argparse
import re
import time

from sandbox.app.options import InputPath
from sandbox.errors import UserError

from .common import claim_directory, claim_outputs, models_file, output_dir, output_file

EXAMPLE = """examples:
  sandbox export runs/suite --out results.csv
  sandbox export runs/exp --out results.parquet          # pip install '.[data]'
  sandbox export runs/suite --calls --out calls.jsonl
  sandbox export runs/exp --inspect logs/ && inspect view --log-dir logs/
Columns and their types: evaluation/README.md, "Exporting results"."""

# What --inspect writes into its directory (one log per run set), and may write over.
INSPECT_LOGS = re.compile(r".+\.eval")


def register(sub) -> None:
    p = sub.add_parser(
        "export", help="write every scored unit (or every call) as a table, or as Inspect logs",
        description="Read run sets (suites, benchmark directories, interview sets, or "
                    "directories holding them, such as a sweep) with their boards' own "
                    "readers and write one row per scored unit (an episode, a conversation, a "
                    "script, a dialogue, an answer: what a board averages) with its value, "
                    "each judge's, its status and reason, calls, tokens and money per role. "
                    "--calls: one row per LLM call instead. --inspect: one Inspect eval log "
                    "per run set. Reads saved files only; calls no model.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dirs", nargs="+", type=InputPath(), metavar="DIR",
                   help="run sets, or directories holding them")
    p.add_argument("--out", type=output_file, metavar="FILE",
                   help="the table: .csv, .jsonl or .parquet (the `data` extra)")
    p.add_argument("--calls", action="store_true",
                   help="one row per LLM call instead of one per scored unit")
    p.add_argument("--inspect", type=output_dir, metavar="LOGDIR",
                   help="write one Inspect eval log per run set here (the `inspect` extra)")
    p.add_argument("--models", type=InputPath(), metavar="FILE",
                   help="prices for the money columns where the models file a run was made "
                        "with (recorded in its header) gives none [default: $SANDBOX_MODELS "
                        "or the user's models file]")
    p.set_defaults(func=main)


def main(args) -> int:
    from evaluation.export import (
        CALL_COLUMNS,
        UNIT_COLUMNS,
        ExportError,
        call_rows,
        check_format,
        read_units,
        write_inspect_logs,
        write_rows,
    )
    from sandbox import lock

    if (args.out is None) == (args.inspect is None):
        raise UserError("say where: --out FILE (a table) or --inspect LOGDIR (Inspect logs)")
    if args.calls and args.out is None:
        raise UserError("--calls writes a table: give --out FILE")
    claim_outputs(args, args.out, args.inspect, what="the export")
    try:
        if args.out is not None:
            check_format(args.out)
            lock.hold_output(args.out, file=True)
        else:
            from evaluation.export.inspect_logs import check_inspect

            check_inspect()
            claim_directory(args.inspect, INSPECT_LOGS, "Inspect logs")
            lock.hold_output(args.inspect)
        started = time.monotonic()
        export = read_units(args.dirs, models_file(args))
        if args.inspect is not None:
            written = write_inspect_logs(export, args.inspect)
            what = f"{len(written)} Inspect log(s) into {args.inspect}"
        elif args.calls:
            rows, uncounted = call_rows(export)
            export.skipped += uncounted
            size = write_rows(rows, CALL_COLUMNS, args.out)
            what = f"{len(rows)} call row(s) to {args.out} ({size:,} bytes)"
        else:
            size = write_rows(export.rows, UNIT_COLUMNS, args.out)
            what = f"{len(export.rows)} unit row(s) to {args.out} ({size:,} bytes)"
    except ExportError as exc:
        raise UserError(str(exc)) from None
    print(f"Wrote {what} from {len(export.run_sets)} run set(s) in "
          f"{time.monotonic() - started:.1f} s.")
    if export.skipped:
        print(f"Skipped {len(export.skipped)}:")
        for line in export.skipped:
            print(f"- {line}")
    return 0
