"""RefuteBench declared as a benchmark plug-in (entry point `sandbox.benchmarks: refutebench`):
its items, roles, dialogue, judges and board tied together; the command line makes `sandbox
refutebench` and `sandbox refutebench-board` from this declaration.

Like every benchmark's plugin module, this is the benchmark's composition root: the one module
of tasks/refutebench that may name its scorers (evaluation/refutebench) and the app's plug-in
API.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evaluation.kit import JUDGE_FORMATS
from evaluation.refutebench import (
    JUDGE_TAG,
    JUDGES,
    board_data,
    board_markdown,
    board_plot,
    build_board,
    curves_png,
    judges,
)
from evaluation.refutebench.board import POOLED
from sandbox.app.options import PlotFile, Words
from sandbox.app.plugins import Benchmark, Board, BoardReport, Items, Judging, Option, Plugin
from tasks.kit import Cast, Role

from . import (
    ANSWER_SAMPLING,
    ANSWER_TAG,
    DEFAULT_LANGUAGE,
    FAMILIES,
    JUDGE_SAMPLING,
    OPTION_DEFAULTS,
    REFUTER_SAMPLING,
    REFUTER_TAG,
    SETTINGS,
    Item,
    RefuteBenchScenario,
    V1Item,
    V1Scenario,
    load_items,
)


def _scenario(item: Item | V1Item, item_id: str, cast: Cast, options: dict[str, Any]):
    if isinstance(item, V1Item):  # a public 1.0 file, run as it is
        return V1Scenario(item, cast)
    return RefuteBenchScenario(item, cast, language=options.get("language", DEFAULT_LANGUAGE))


def _board(dirs, judges=None, seed: int = 0, resamples: int = 1000,
           curves: Path | None = None, curves_task: str = "mt") -> BoardReport:
    board = build_board(dirs, judges=judges, seed=seed, resamples=resamples)
    markdown = board_markdown(board)
    if curves is not None:
        family = curves_task if curves_task == "all" or curves_task in board.families \
            else "all"
        markdown += f"\nFig. 6 curves ({family}): {curves_png(board, curves, family)}\n"
    return BoardReport(markdown=markdown, data=board_data(board), plot=board_plot(board))


REFUTEBENCH = Benchmark(
    name="refutebench", title="RefuteBench 2.0 refutation benchmark",
    roles=[Role("model", ANSWER_SAMPLING, ANSWER_TAG, "model under test (decodes greedily by "
                "default)", "per answer"),
           Role("refuter", REFUTER_SAMPLING, REFUTER_TAG, "model that plays the dissatisfied "
                "user and writes the refutations", "per refutation")],
    under_test="model",
    items=Items(load_items, noun="dialogues",
                help="seed queries, templates and unrelated requests: our YAML, or a public "
                     "RefuteBench 1.0 MT or email .jsonl file, run as it is and checked by rule "
                     "[default: the built-in set, 27 MT, 26 Sum, 27 Writing seeds]"),
    scenario=_scenario,
    judging=Judging(JUDGES, JUDGE_SAMPLING, options={"judge_format": Option(
        "text", "how the evaluator answers: text (the paper's: an explanation, then the rating "
        "as [[n]]) or json (a schema-bound JSON object, explanation then rating 1-5, which a "
        "local model's grammar cannot leave: for small judges that rarely write [[n]])",
        JUDGE_FORMATS)}, choose=lambda chosen: judges(chosen["judge_format"])),
    board=Board(_board, options={
        "curves": {"type": PlotFile(), "metavar": "PNG",
                   "help": "draw the Fig. 6 curves (R(a_k, r_1) and R(q, a_k) by turn) into "
                           "this PNG"},
        "curves_task": {"choices": [*FAMILIES, "all"], "default": "mt",
                        "help": "the task family of the curves (the paper's is MT) "
                                "[default: %(default)s]"}},
        example="sandbox refutebench-board runs/rb-smol-transient runs/rb-smol-persistent "
                "--curves curves.png --plot board.png", pooled=POOLED),
    # The defaults are `Unset` strings: a 1.0 file refuses only the options given (items.py).
    options={"tasks": Option(OPTION_DEFAULTS["tasks"], "task families, comma-separated (mt, "
                                                       "summ, writing)",
                             type=Words("task families")),
             "setting": Option(OPTION_DEFAULTS["setting"], "transient (3 refutations of one "
                               "query) or persistent (one standing refutation, C unrelated "
                               "requests, the query again)",
                               choices=SETTINGS),
             "distractors": Option(OPTION_DEFAULTS["distractors"], "persistent: the numbers C "
                                   "of unrelated requests, each from 0 to 3, comma-separated "
                                   "(one dialogue per seed and C)",
                                   type=Words("numbers of unrelated requests")),
             "language": Option(OPTION_DEFAULTS["language"], "target language of the "
                                "translations", type=Words("a language"))},
    noun="dialogues",
    example="sandbox refutebench --model local/smollm2-135m --refuter local/smollm2-135m "
            "--judge local/smollm2-135m --judge-format json --tasks mt --every 27 "
            "--model-max-tokens 256 --out runs/rb-transient",
    rates=Path(__file__).with_name("rates.json"))

PLUGIN = Plugin("refutebench", "RefuteBench 2.0 (and the 1.0 files): does a model keep to "
                "the user's refutations", benchmarks=[REFUTEBENCH])

__all__ = ["JUDGE_TAG", "PLUGIN", "REFUTEBENCH"]
