"""`sandbox compare A B`: two run sets of one benchmark, item by item (evaluation/compare)."""

from __future__ import annotations

import argparse
from pathlib import Path

from sandbox.app.options import RESAMPLES, SEED, InputPath, Model, Number, Words, declared
from sandbox.errors import UserError

from .benchmark import add_board_outputs, write_board

# A difference is on the board's own scale (0-1 scores, a judge's 1-10): far below this.
EFFECT = Number(0, 1_000, above=True)


def set_path(text: str) -> str:
    """The directory (or file) a run set names: DIR of DIR:ARCH."""
    head, sep, arch = text.rpartition(":")
    if sep and head and arch and "/" not in arch and not Path(text).exists():
        return head
    return text


@declared("input-path")
def run_set(text: str) -> str:
    """A run set to compare: a directory, or DIR:ARCH for one architecture of it. The
    directory is checked at parsing (there, not a FIFO); the text is kept as given."""
    InputPath()(set_path(text))
    return text


EXAMPLE = """examples:
  sandbox compare runs/suite:ga runs/suite:ga_tdp --effect 0.1 --plot diff.png
  sandbox compare runs/pp-smol runs/pp-other --json diff.json
  sandbox compare runs/exp/BENCHMARK/smol-ga runs/exp/BENCHMARK/smol-ga_tdp
A is the baseline: every difference is B - A."""


def register(sub) -> None:
    p = sub.add_parser(
        "compare", help="compare two run sets of one benchmark, item by item (B - A)",
        description="Match the items two run sets of one benchmark share (each benchmark's "
                    "item key: evaluation/README.md, 'Comparing two run sets') and print the mean "
                    "difference B - A with a 95% bootstrap interval over what was sampled, a "
                    "paired sign-flip p-value, B's wins / ties / losses, the same per task "
                    "type, the matched items needed to detect the difference at 80% power, and "
                    "every item only one side has, with why. Reads saved scores and judgments "
                    "only; calls no model.",
        epilog=EXAMPLE, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("a", type=run_set, metavar="A",
                   help="the baseline: a suite, benchmark directory or interview set; DIR:ARCH "
                        "for one architecture of a suite or set that holds several")
    p.add_argument("b", type=run_set, metavar="B", help="the other run set, of the same benchmark")
    p.add_argument("--rules", choices=["ours", "reference"], default="ours",
                   help="which rule set's scores, where a benchmark scores by two "
                        "[default: %(default)s]")
    p.add_argument("--metric", type=Words("a metric", 200),
                   help="which per-item measure, where a benchmark has several "
                        "(evaluation/README.md) [default: its board's headline]")
    p.add_argument("--judge", action="append", dest="judges", type=Model(),
                   metavar="MODEL",
                   help="use only these judges' scores [default: every judge found]")
    p.add_argument("--effect", type=EFFECT,
                   help="also say how many matched items detect a difference this large")
    p.add_argument("--seed", type=SEED, default=0,
                   help="bootstrap and permutation seed [default: %(default)s]")
    p.add_argument("--resamples", type=RESAMPLES, default=1000,
                   help="bootstrap resamples [default: %(default)s]")
    add_board_outputs(p, "draw the per-item differences and the mean's interval into this PNG")
    p.set_defaults(func=main)


def main(args) -> int:
    from evaluation.compare import compare_dirs
    from evaluation.kit import BoardError
    from sandbox.outdirs import OutputTaken, refuse_inputs

    # A and B are run sets named as text (DIR:ARCH), so the claim is told what they read: a
    # --json over A's manifest would leave A unable to resume.
    for path in (args.markdown, args.json, args.plot):
        if path is not None:
            try:
                refuse_inputs(path, [Path(set_path(args.a)), Path(set_path(args.b))],
                              "the comparison")
            except OutputTaken as exc:
                raise UserError(str(exc)) from None
    try:
        report = compare_dirs(args.a, args.b, rules=args.rules, metric=args.metric,
                              judges=args.judges, seed=args.seed, resamples=args.resamples,
                              effect=args.effect)
    except (BoardError, OSError) as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0
