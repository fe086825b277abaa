"""`sandbox interview RUN --agent NAME "question"...`: ask an agent of a finished run about its
life, as of a moment of the run; `sandbox interview-set RUN... --judge M --out DIR`: the whole
question set of every agent of every run, judged 1-5, and the board per architecture x
category; `sandbox interview-board DIR...`: that board again, from the saved files.

Nothing is written into a run: answers are cached in a file outside it (--cache; default
OUT/llm_cache.jsonl with --out, else $XDG_CACHE_HOME/sandbox/interviews.jsonl), and with --out
saved as JSON (sandbox/interviews.py). The answering is agents/interview.py, the judging and the
board evaluation/interview; this module only wires them.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from pydantic import ValidationError

from sandbox import terminal
from sandbox.app.options import (
    PERSON,
    RESAMPLES,
    SEED,
    CacheFile,
    Count,
    InputDir,
    InputFile,
    Model,
    Moment,
    Text,
)
from sandbox.errors import UserError
from sandbox.files import FileFormatError
from sandbox.lock import hold_output
from sandbox.log import CACHE, CALLS, RunFormatError, load_run
from sandbox.simtime import MOMENT_FORMATS, MomentError, parse_moment

from .benchmark import add_board_outputs
from .common import (
    add_model_access_options,
    build_llm,
    intermixed,
    output_dir,
)

EMBEDDED = "local/smollm2-135m"
# Memories retrieved per question: the reference retrieves 30 (a conversation 50); a prompt
# of 10,000 memories would not fit any model's context.
MEMORIES = Count(1, 10_000)
AT_HELP = f"the moment the agent answers from: {MOMENT_FORMATS}"


def default_cache() -> Path:
    """Where answers are cached without --cache or --out: outside every run."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "sandbox" / "interviews.jsonl"


def _model_options(p: argparse.ArgumentParser, cache_help: str) -> None:
    g = p.add_argument_group("model")
    g.add_argument("--model", type=Model(),
                   help="the model the agent answers with: an alias of the models file, "
                        "local/smollm2-135m (embedded, offline), openai/<model>, scripted/town "
                        "(test double) [default: the model the run gave the agent]")
    g.add_argument("--cache", type=CacheFile(), metavar="FILE", help=cache_help)
    add_model_access_options(g)


def register(sub) -> None:
    p = sub.add_parser(
        "interview", help="ask an agent of a run about its life, as of a moment of the run",
        description="Rebuild an agent of a finished run with its memory as of a moment (the "
                    "log's memories up to then, the architecture the run gave it) and let it "
                    "answer each question in its own voice, through its own retrieval: prints "
                    "the memories retrieved (with their times) and the answer. Nothing is "
                    "written into RUN; answers are cached (the same question of the same state "
                    "is answered from the cache), and with --out saved as JSON.",
        epilog='example: sandbox interview runs/day --agent "Agnes Whitfield" --at 10:30 '
               '"What are you going to do next?" "Who did you talk with today?"')
    intermixed(p)  # the questions may follow the options
    p.add_argument("run", type=InputDir(), metavar="RUN", help="a run directory of a town")
    p.add_argument("questions", nargs="*", type=Text("a question", most=5_000), metavar="QUESTION",
                   help="questions to ask (placeholders {name}, {first_name}, {other})")
    p.add_argument("--agent", required=True, type=PERSON, metavar="NAME",
                   help="the agent to interview")
    p.add_argument("--at", type=Moment(end=True), metavar="TIME", help=f"{AT_HELP} [default: end]")
    p.add_argument("--questions", dest="questions_file", type=InputFile(), metavar="FILE",
                   help="also ask the questions of this file (agents/interview_questions.yaml "
                        "is the built-in one; questions sharing a `thread:` are one "
                        "conversation)")
    p.add_argument("--chat", action="store_true",
                   help="ask the QUESTIONs as one conversation: each sees the earlier ones "
                        "and their answers (follow-up questions)")
    p.add_argument("--memories", type=MEMORIES, metavar="K",
                   help="memories retrieved per question [default: as many as the agent's "
                        "conversation module retrieves for a line, 15]")
    p.add_argument("--out", type=output_dir, metavar="DIR",
                   help="save the answers as JSON under DIR/answers (and cache there)")
    _model_options(p, "answer cache file [default: DIR/llm_cache.jsonl with --out, else "
                      "$XDG_CACHE_HOME/sandbox/interviews.jsonl]")
    p.set_defaults(func=interview_main)

    s = sub.add_parser(
        "interview-set", help="interview every agent of runs, judge the answers, board them",
        description="Ask every agent of every RUN (one run per architecture, same seed) every "
                    "question of the set (five categories: self-knowledge, memory, plans, "
                    "reactions, reflections), have each answer rated 1-5 by the --judge "
                    "models, and print the board: the mean rating per architecture and "
                    "category with a 95%% bootstrap interval and n. Resumable: saved answers "
                    "and judgments are kept. Nothing is written into a RUN.",
        epilog="example: sandbox interview-set runs/ga runs/ga_tdp runs/ga_no_reflection "
               "--judge local/smollm2-135m --out runs/interviews --plot interviews.png")
    s.add_argument("runs", nargs="+", type=InputDir(), metavar="RUN", help="run directories")
    s.add_argument("--questions", dest="questions_file", type=InputFile(), metavar="FILE",
                   help="question file [default: agents/interview_questions.yaml]")
    s.add_argument("--judge", action="append", dest="judges", required=True, type=Model(),
                   metavar="MODEL",
                   help="a judge model (repeat for several)")
    s.add_argument("--out", type=output_dir, required=True, metavar="DIR",
                   help="where answers, judgments, calls and the cache go")
    s.add_argument("--at", type=Moment(end=True), metavar="TIME",
                   help=f"{AT_HELP}, in every run [default: end]")
    s.add_argument("--memories", type=MEMORIES, metavar="K",
                   help="memories retrieved per question [default: the agent's own, 15]")
    s.add_argument("--rejudge", action="store_true", help="ask every judge again")
    _board_options(s)
    _model_options(s, "answer and judgment cache [default: DIR/llm_cache.jsonl]")
    s.set_defaults(func=set_main, resumable=True)

    b = sub.add_parser(
        "interview-board",  # listed under `sandbox board` (board.py)
        description="The mean rating per architecture and question category, with a 95%% "
                    "bootstrap interval and n, from the answers and judgments `sandbox "
                    "interview-set` saved (no model is called).",
        epilog="example: sandbox interview-board runs/interviews --plot interviews.png")
    b.add_argument("dirs", nargs="+", type=InputDir(), metavar="DIR",
                   help="directories written by `sandbox interview-set --out`")
    b.add_argument("--judge", action="append", dest="judges", type=Model(), metavar="MODEL",
                   help="use only these judges' ratings [default: the set's judges]")
    _board_options(b)
    b.set_defaults(func=board_main)


def _board_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=SEED, default=0,
                   help="bootstrap seed [default: %(default)s]")
    p.add_argument("--resamples", type=RESAMPLES, default=1000,
                   help="bootstrap resamples [default: %(default)s]")
    add_board_outputs(p, "draw each rating and its interval into this PNG")


# -- shared -------------------------------------------------------------------------------------
def _load(path: Path):
    try:
        run = load_run(path)
    except RunFormatError as exc:
        raise UserError(str(exc)) from exc
    from agents.frozen import run_agents, town_config

    if not run_agents(run):
        raise UserError(f"{path}: no agent joined this run (nobody to interview)")
    if not town_config(run.header.config):
        raise UserError(f"{path} is a {run.header.scenario} run: its agents keep no memory, "
                        "plan or reflection to interview (interview a town run: sandbox run "
                        "town_day, or a task template)")
    return run


def run_model(runs, agents: list[str] | None = None) -> str:
    """The model the runs gave their agents (`agents`, else all of them): what an interview
    answers with by default, so a run made on one model is not asked on another. Several
    models make --model necessary; a run that records none is asked on the embedded one."""
    seen = {model for run in runs for name, model in run.header.models.items()
            if agents is None or name in agents}
    if len(seen) > 1:
        raise UserError(f"the runs' agents ran on {', '.join(sorted(seen))}: choose the model "
                        "that answers with --model")
    return seen.pop() if seen else EMBEDDED


def _moment(text: str | None, run) -> float:
    from agents.frozen import run_end

    try:
        return parse_moment(text, run.header.start_time, run_end(run))
    except MomentError as exc:
        raise UserError(f"--at {exc}") from exc


def _inside(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def _outside(run_dir: Path, path: Path | None, option: str) -> None:
    """A UserError when `path` lies in the run, or holds it: nothing is written into a run."""
    if path is None:
        return
    if _inside(path, run_dir) or _inside(run_dir, path):
        raise UserError(f"{option} {path}: inside or around the run {run_dir}; nothing is "
                        "written into a run, choose a place outside it")


def _questions(path: Path | None):
    from agents.interview import load_questions

    try:
        return load_questions(path)
    except FileFormatError as exc:
        raise UserError(str(exc)) from exc


def _run_id(run_dir: Path) -> str:
    from sandbox.interviews import slug

    return slug(run_dir.resolve().name)


# -- sandbox interview --------------------------------------------------------------------------
def _say_bare_persona(who, console=None) -> None:
    """A warning when the agent answers as a bare persona (its name and place only)."""
    if who.persona_note:
        (console or terminal.console()).print(
            f"[yellow]warning:[/] {who.name} answers with a bare persona (name and place "
            f"only): {who.persona_note}", highlight=False)


def interview_main(args) -> int:
    from sandbox.llm import CacheMiss

    try:
        return _interview(args)
    except CacheMiss as exc:  # --cache-only, and a question not answered before
        raise UserError(str(exc)) from exc


def _interview(args) -> int:
    from agents.frozen import NoSuchAgent, frozen_agent, run_agents
    from agents.interview import Interviewer, Question, answer, others_of, state_of
    from sandbox.interviews import AnswerMemo, memo_path, save_answer
    from sandbox.llm import CallLog

    run = _load(args.run)
    at = _moment(args.at, run)
    try:
        questions = [Question(text=q, thread="chat" if args.chat else "")
                     for q in args.questions]
    except ValidationError as exc:
        reason = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise UserError(f"question: {reason}") from exc
    if args.questions_file is not None:
        questions += _questions(args.questions_file)
    if not questions:
        raise UserError("no question: give one or more, or --questions FILE (agents/"
                        "interview_questions.yaml is the built-in set)")
    try:
        who = frozen_agent(run, args.agent, at)
    except NoSuchAgent as exc:
        raise UserError(str(exc)) from exc
    _say_bare_persona(who)
    if args.model is None:
        args.model = run_model([run], [who.name])
    cache = None if args.no_cache else (
        args.cache or (args.out / CACHE if args.out else default_cache()))
    _outside(run.dir, args.out, "--out")
    _outside(run.dir, cache, "--cache")
    if args.out is not None:
        hold_output(args.out)
    if cache is not None:
        hold_output(cache, file=True)
    llm = build_llm(args, cache_default=cache)
    console = terminal.console()
    others = others_of(who.name, list(run_agents(run)))
    where = f", at {who.location}" + (f", {who.doing}" if who.doing else "")
    console.print(f"{who.name} ({who.architecture_name}), {who.clock:%a %Y-%m-%d %H:%M:%S} "
                  f"({at:g} s into {args.run}){where}; {len(who.memories)} memories then; "
                  f"answering with {llm.model_id}", markup=False, highlight=False,
                  soft_wrap=True)
    calls = CallLog(args.out / CALLS if args.out else None)
    memo = None
    if cache is not None:
        hold_output(memo_path(cache), file=True)
        memo = AnswerMemo(memo_path(cache))
    interviewer = Interviewer(who)  # rebuilt once, and only when an answer is not kept
    threads: dict[str, list[tuple[str, str]]] = {}
    started, replies, kept = time.perf_counter(), [], 0
    try:
        for question in questions:
            filled = question.filled(who, others)
            history = list(threads.get(question.thread, [])) if question.thread else []
            found = memo and memo.get(state_of(who, filled, llm.model_id, args.memories,
                                               history))
            if found:
                reply, kept = found.model_copy(update={"cached": True}), kept + 1
            else:
                reply = answer(who, filled, llm, run_id=_run_id(run.dir), run=str(args.run),
                               k=args.memories, calls=calls, interviewer=interviewer,
                               history=history)
                if memo is not None:
                    memo.add(reply)
            if question.thread:
                threads.setdefault(question.thread, []).append((filled.text, reply.answer))
            if args.out is not None:
                save_answer(args.out, reply)
            replies.append(reply)
            _show(console, reply, follow_up=bool(history))
    finally:
        calls.close()
    cached = sum(r.cached for r in calls.records)
    failed = [r for r in replies if r.status != "ok"]
    console.print(f"{len(replies)} answer(s), {len(calls.records)} call(s) ({cached} from the "
                  f"cache)" + (f", {kept} answer(s) kept from before" if kept else "")
                  + f", {time.perf_counter() - started:.1f} s"
                  + (f"; {len(failed)} without a usable answer" if failed else "")
                  + (f"; saved under {args.out / 'answers'}" if args.out else "")
                  + (f"; cache {cache}" if cache else ""), markup=False, highlight=False)
    return 1 if any(r.status == "unavailable" for r in replies) else 0


def _show(console, reply, follow_up: bool = False) -> None:
    asked = "Q (follow-up)" if follow_up else "Q"
    lines = ["", f"{asked} ({reply.category}): {reply.question}" if reply.category
             else f"{asked}: {reply.question}",
             f"memories used ({len(reply.memories)}, best first):"]
    for m in reply.memories:
        score = f"  (score {m.score:.2f})" if m.score is not None else ""
        lines.append(f"  {m.clock:%a %H:%M}  {m.kind:<7} {m.description}{score}")
    said = reply.answer or "(no answer)"
    note = " [from the cache]" if reply.cached else ""
    if reply.status != "ok":
        note += f" [{reply.status}: {', '.join(reply.faults)}]"
    lines.append(f"A: {said}{note}")
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


# -- sandbox interview-set ----------------------------------------------------------------------
def set_main(args) -> int:
    from sandbox.llm import CacheMiss

    try:
        return _interview_set(args)
    except CacheMiss as exc:  # --cache-only, and an answer or a judgment not made before
        raise UserError(f"{exc}; what was saved before is kept") from exc


def _interview_set(args) -> int:
    import json

    from agents.frozen import frozen_agent, run_agents
    from agents.interview import Interviewer, answer, k_for, others_of, state_of
    from evaluation.interview import MANIFEST
    from sandbox.interviews import answer_dir, digest, load_answer, save_answer, slug
    from sandbox.llm import CallLog
    from sandbox.storage import write_atomic

    out: Path = args.out
    judges = list(args.judges)
    if len(set(judges)) != len(judges):
        raise UserError("the same --judge is given twice; each judge model counts once")
    # The questions first: a file of the user's is checked before any run is read.
    questions = _questions(args.questions_file)
    runs = [_load(path) for path in args.runs]
    ids = [_run_id(run.dir) for run in runs]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise UserError(f"two runs named {twice[0]!r}: answers are filed by the run "
                        "directory's name, give runs of distinct names")
    for run in runs:
        _outside(run.dir, out, "--out")
        _outside(run.dir, args.cache, "--cache")
    moments = [_moment(args.at, run) for run in runs]
    hold_output(out)
    if args.model is None:
        args.model = run_model(runs)
    config = {"model": args.model, "at": args.at or "end", "memories": args.memories,
              "questions": digest([q.model_dump() for q in questions])}
    # Every model (the answering one, each judge) is built before anything is written: a
    # misspelt judge must not leave a manifest and answers behind.
    cache = args.cache or out / CACHE
    llm = build_llm(args, cache_default=cache)
    judge_llms = {judge: build_llm(argparse.Namespace(**{**vars(args), "model": judge}),
                                   cache_default=cache) for judge in judges}
    manifest_path = out / MANIFEST
    if manifest_path.is_file():
        try:
            before = json.loads(manifest_path.read_text(encoding="utf-8"))
        except ValueError:
            before = {}
        for key, value in config.items():
            if key in before.get("config", {}) and before["config"][key] != value:
                raise UserError(f"{out} holds interviews made with another {key} "
                                f"({before['config'][key]!r}, not {value!r}); use another "
                                "--out, or the same options to go on")
    agents_of = [run_agents(run) for run in runs]
    selected = [{"item": f"{rid}/{slug(name)}/{slug(q.key)}", "architecture": arch,
                 "category": q.category}
                for rid, agents in zip(ids, agents_of, strict=True)
                for name, arch in agents.items() for q in questions]
    manifest = {"format": "interview-set", "version": 1, "config": config, "judges": judges,
                "categories": list(dict.fromkeys(q.category for q in questions)),
                "runs": [{"id": rid, "path": str(path)} for rid, path in zip(ids, args.runs,
                                                                            strict=True)],
                "selected": selected}
    write_atomic(manifest_path, json.dumps(manifest, indent=1) + "\n")
    console = terminal.console()
    calls = CallLog(out / CALLS)
    asked = kept = unusable = 0
    answered = []
    try:
        for run, rid, agents, at in zip(runs, ids, agents_of, moments, strict=True):
            for name in agents:
                who = frozen_agent(run, name, at)
                _say_bare_persona(who, console)
                made = 0
                interviewer = Interviewer(who)  # rebuilt once, when an answer is not kept
                threads: dict[str, list[tuple[str, str]]] = {}
                for question in questions:
                    filled = question.filled(who, others_of(name, list(agents)))
                    folder = answer_dir(out, rid, name, filled.key)
                    saved = load_answer(folder)
                    history = list(threads.get(question.thread, [])) if question.thread else []
                    state = state_of(who, filled, llm.model_id, args.memories, history)
                    if saved is not None and saved.status != "unavailable" \
                            and saved.state == state:
                        kept += 1
                        answered.append((folder, saved))
                        if question.thread:
                            threads.setdefault(question.thread, []).append(
                                (filled.text, saved.answer))
                        continue
                    reply = answer(who, filled, llm, run_id=rid, run=str(run.dir),
                                   k=args.memories, calls=calls, interviewer=interviewer,
                                   history=history)
                    if question.thread:
                        threads.setdefault(question.thread, []).append((filled.text,
                                                                        reply.answer))
                    save_answer(out, reply)
                    made += 1
                    unusable += reply.status != "ok"
                    answered.append((folder, reply))
                asked += made
                console.print(f"{rid}: {name} ({who.architecture_name}, "
                              f"{who.clock:%a %H:%M}, {len(who.memories)} memories, "
                              f"up to {k_for(who, args.memories)} recalled per question): {made} "
                              f"answered, {len(questions) - made} kept", markup=False,
                              highlight=False, soft_wrap=True)
        console.print(f"answers: {asked} asked, {kept} kept"
                      + (f", {unusable} without a usable answer" if unusable else ""),
                      markup=False, highlight=False)
        tally = _judge(judge_llms, answered, calls, console, rejudge=args.rejudge)
    finally:
        calls.close()
    code = _board(args, [out])
    unavailable = sum(a.status == "unavailable" for _, a in answered) + tally.unavailable
    if unavailable:
        console.print(f"{unavailable} call(s) reached no model (answers or judgments): run "
                      "the same command again to ask them", markup=False, highlight=False)
        return 1
    return code


def _judge(judge_llms, answered, calls, console, *, rejudge: bool):
    from evaluation.interview import INTERVIEW_JUDGE, JUDGE_SAMPLING, Answered
    from evaluation.kit import Ask, JudgeTally, judge_asks, judge_dialogue, judgment_problem
    from sandbox.judgments import load_judgments, save_judgment, settle_status

    tally = JudgeTally()
    asks = []
    for judge, llm in judge_llms.items():
        for folder, reply in answered:
            item = Answered(folder, reply)
            if not INTERVIEW_JUDGE.applies(item):
                continue  # no answer to judge: the board counts it
            have = next((j for j in load_judgments(folder, INTERVIEW_JUDGE.name)
                         if j.model == llm.model_id and j.status != "unavailable"
                         and judgment_problem(INTERVIEW_JUDGE, j, item) is None), None)
            asks.append(Ask(
                llm=llm, kept=lambda have=have: have,
                ask=lambda asked, item=item: settle_status(
                    judge_dialogue(INTERVIEW_JUDGE, item, asked, JUDGE_SAMPLING)),
                save=lambda judgment, folder=folder: save_judgment(folder, judgment),
                note=judge, recorded=(INTERVIEW_JUDGE.tag, f"judge:{llm.model_id}")))
    judge_asks(asks, calls, rejudge=rejudge, tally=tally)
    console.print(f"judgments: {tally.made} made, {tally.skipped} kept"
                  + (f", {tally.fallbacks} fell back" if tally.fallbacks else "")
                  + (f", {tally.unavailable} unavailable" if tally.unavailable else ""),
                  markup=False, highlight=False)
    return tally


# -- the board ----------------------------------------------------------------------------------
def _board(args, dirs, judges=None) -> int:
    from evaluation.interview import interview_board
    from evaluation.kit import BoardError

    from .benchmark import write_board

    try:
        report = interview_board(dirs, judges=judges, seed=args.seed,
                                 resamples=args.resamples)
    except BoardError as exc:
        raise UserError(str(exc)) from exc
    write_board(report, args)
    return 0


def board_main(args) -> int:
    return _board(args, args.dirs, args.judges)
