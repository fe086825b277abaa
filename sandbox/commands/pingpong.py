"""`sandbox pingpong` runs the PingPong role-play benchmark for one player;
`sandbox pingpong-board` builds the leaderboard from one or more benchmark directories."""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import ValidationError
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from sandbox import terminal
from sandbox.commands.common import non_negative_int
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.llm import CacheMiss, LLMConfigError, LLMSettings
from sandbox.prompts import set_prompt_dir

EMBEDDED = "local/smollm2-135m"


def _sampling_options(p: argparse.ArgumentParser, role: str, default, token_help: str) -> None:
    g = p.add_argument_group(f"{role} sampling")
    g.add_argument(f"--{role}-temperature", type=float, default=default.temperature,
                   help="[default: %(default)s]")
    g.add_argument(f"--{role}-top-p", type=float, default=default.top_p,
                   help="[default: %(default)s]")
    g.add_argument(f"--{role}-max-tokens", type=int, default=default.max_tokens,
                   help=f"{token_help} [default: %(default)s]")


def register(sub) -> None:
    from tasks.pingpong import INTERROGATOR_SAMPLING, JUDGE_SAMPLING, PLAYER_SAMPLING

    p = sub.add_parser(
        "pingpong", help="run the PingPong role-play benchmark for one player",
        description="Play every character x situation pair (a run directory each), judge "
                    "every player turn with each judge, and print the player's scores. "
                    "Finished conversations and saved judgments are skipped, so an "
                    "interrupted run resumes and a new --judge calls no player.",
        epilog="example: sandbox pingpong --player local/smollm2-135m --interrogator "
               "local/smollm2-135m --judge local/smollm2-135m --every 8 --out runs/pp-smol")
    p.add_argument("--player", default=EMBEDDED, help="model under test [default: %(default)s]")
    p.add_argument("--interrogator", default=EMBEDDED,
                   help="model that plays the user [default: %(default)s]")
    p.add_argument("--judge", action="append", dest="judges", metavar="MODEL",
                   help=f"a judge model; repeat for several (their scores are averaged) "
                        f"[default: {EMBEDDED}]")
    p.add_argument("--settings", type=Path,
                   help="characters and situations: our YAML or a public PingPong settings "
                        "JSON [default: the built-in 8 x 8 set]")
    p.add_argument("--language", default="en", help="language block of the settings file "
                                                     "[default: %(default)s]")
    p.add_argument("--out", type=Path, required=True,
                   help="benchmark directory (one player configuration per directory)")
    p.add_argument("--label", help="the player's name on the leaderboard [default: the model]")
    p.add_argument("--every", type=int, default=1, metavar="K",
                   help="keep about one pair in K, spread over characters and situations "
                        "(a quick run) [default: %(default)s]")
    p.add_argument("--seed", type=non_negative_int, default=0,
                   help="base seed [default: %(default)s]")
    p.add_argument("--rejudge", action="store_true",
                   help="ask the judges again even where a judgment is saved")
    _sampling_options(p, "player", PLAYER_SAMPLING, "per reply")
    _sampling_options(p, "interrogator", INTERROGATOR_SAMPLING, "per line")
    _sampling_options(p, "judge", JUDGE_SAMPLING, "per judged turn")
    g = p.add_argument_group("model access")
    g.add_argument("--base-url", help="OpenAI-compatible endpoint for openai/ models "
                                      "[default: $OPENAI_BASE_URL or OpenAI]")
    g.add_argument("--json-dialect", choices=["json_schema", "json_object"],
                   help="how the endpoint takes a JSON schema")
    g.add_argument("--max-concurrency", type=int, help="LLM calls in flight at once")
    mode = g.add_mutually_exclusive_group()
    mode.add_argument("--cache-only", action="store_true",
                      help="replay every answer from the runs' caches; a miss stops the run")
    mode.add_argument("--no-cache", action="store_true", help="do not read or write caches")
    g.add_argument("--prompts", type=Path,
                   help="directory of prompt templates overriding the built-in ones "
                        "(roleplay_*.j2, pingpong_judge_*.j2)")
    p.set_defaults(func=main)

    b = sub.add_parser(
        "pingpong-board", help="leaderboard of PingPong benchmark directories",
        description="Score every player from its saved conversations and judgments (no model "
                    "is called): per-criterion means, refusal ratio, the v2 length penalty "
                    "and a bootstrap 95% CI. Prints Markdown; --json writes the numbers.")
    b.add_argument("dirs", nargs="+", type=Path, metavar="DIR",
                   help="directories written by `sandbox pingpong --out`")
    b.add_argument("--judge", action="append", dest="judges", metavar="MODEL",
                   help="use only these judges' scores [default: every judge found]")
    b.add_argument("--seed", type=non_negative_int, default=0,
                   help="bootstrap seed [default: %(default)s]")
    b.add_argument("--resamples", type=int, default=1000,
                   help="bootstrap resamples [default: %(default)s]")
    b.add_argument("--markdown", type=Path, help="also write the table to this file")
    b.add_argument("--json", type=Path, help="write the leaderboard as JSON to this file")
    b.set_defaults(func=board_main)


def _sampling(args, role: str):
    from tasks.pingpong import Sampling

    try:
        return Sampling(temperature=getattr(args, f"{role}_temperature"),
                        top_p=getattr(args, f"{role}_top_p"),
                        max_tokens=getattr(args, f"{role}_max_tokens"))
    except ValidationError as exc:
        first = exc.errors()[0]
        raise UserError(f"--{role}-{str(first['loc'][0]).replace('_', '-')}: "
                        f"{first['msg']}") from exc


def main(args) -> int:
    from evaluation.pingpong import (
        BenchmarkMismatch,
        ModelPool,
        board_markdown,
        build_board,
        run_benchmark,
    )
    from tasks.pingpong import load_settings

    console = terminal.console()
    judges = args.judges or [EMBEDDED]
    if len(set(judges)) != len(judges):
        raise UserError("the same --judge is given twice; each judge model counts once")
    if args.every < 1:
        raise UserError("--every must be at least 1")
    if args.prompts is not None:
        if not args.prompts.is_dir():
            raise UserError(f"--prompts {args.prompts}: not a directory")
        set_prompt_dir(args.prompts)
    try:
        roleplay = load_settings(args.settings, args.language)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc
    if roleplay.ignored_keys:
        shown = ", ".join(roleplay.ignored_keys[:6])
        more = f" and {len(roleplay.ignored_keys) - 6} more" if len(roleplay.ignored_keys) > 6 \
            else ""
        console.print(f"[dim]ignored keys this benchmark does not use: {shown}{more}[/]")
    sampling = {role: _sampling(args, role) for role in ("player", "interrogator", "judge")}
    mode = "replay" if args.cache_only else "off" if args.no_cache else "record"
    pool = ModelPool(LLMSettings(base_url=args.base_url, json_dialect=args.json_dialect,
                                 max_concurrency=args.max_concurrency, cache_mode=mode))
    try:
        for model in dict.fromkeys([args.player, args.interrogator, *judges]):
            pool.backend(model)  # a bad model string or endpoint fails before any work
    except LLMConfigError as exc:
        raise UserError(str(exc)) from exc
    pairs = roleplay.pairs(args.every)
    console.print(f"[dim]PingPong: {len(pairs)} of {len(roleplay.characters)} x "
                  f"{len(roleplay.situations)} pairs, player {args.player}, interrogator "
                  f"{args.interrogator}, judges {', '.join(judges)}, into {args.out}[/]")
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), TextColumn("[dim]{task.fields[doing]}")]
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("pairs", total=len(pairs), doing="")

        def on_progress(pair: str, doing: str) -> None:
            if doing == "done":
                progress.advance(task)
            progress.update(task, doing=f"{pair}: {doing}")

        try:
            report = run_benchmark(
                args.out, roleplay, pool, player=args.player, interrogator=args.interrogator,
                judges=judges, label=args.label, every=args.every, seed=args.seed,
                player_sampling=sampling["player"],
                interrogator_sampling=sampling["interrogator"],
                judge_sampling=sampling["judge"], rejudge=args.rejudge,
                on_progress=on_progress)
        except BenchmarkMismatch as exc:
            raise UserError(str(exc)) from exc
        except CacheMiss as exc:
            console.print(f"[red]stopped:[/] {exc}\nwhat ran so far is in {args.out}")
            return 1
    console.print(f"conversations run {report.conversations_run}, skipped "
                  f"{report.conversations_skipped}; judgments made {report.judgments_made} "
                  f"({report.judge_fallbacks} fell back), skipped {report.judgments_skipped}; "
                  f"wall time {report.wall_time_s:.1f} s")
    print(board_markdown(build_board([args.out])), end="")
    console.print(f"compare players: sandbox pingpong-board {args.out} OTHER_DIR ...")
    return 0


def board_main(args) -> int:
    from evaluation.pingpong import BoardError, board_json, board_markdown, build_board

    try:
        board = build_board(args.dirs, judges=args.judges, seed=args.seed,
                            resamples=args.resamples)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    table = board_markdown(board)
    print(table, end="")
    if args.markdown:
        args.markdown.write_text(table, encoding="utf-8")
    if args.json:
        args.json.write_text(board_json(board) + "\n", encoding="utf-8")
    return 0
