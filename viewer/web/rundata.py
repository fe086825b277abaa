"""What a report shows of one run directory, as JSON-able data: read with the log's own readers
(`sandbox.log`, `sandbox.judgments`) and, for a run on a map, the viewer's own map and positions.

    data = run_data(Path("runs/demo"), Scrubber())     # never raises for a damaged run
    data["conversations"][0]["turns"][1]["verdicts"]   # each judge's verdict on that turn
    data["replay"]["agents"][0]["legs"]                # [t0, s per tile, last, path]

A run that cannot be read whole (no header, bad lines, a run that did not finish) is still
described: `damaged` says why, and whatever could be read is there.
"""

from __future__ import annotations

import json
import shlex
from collections import Counter
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path
from statistics import fmean
from typing import Any

from sandbox.events import Event
from sandbox.judgments import read_judgments
from sandbox.log import RunFormatError, load_run, run_outcome

from ..timeline import get as _get
from .scrub import Scrubber

SCORE_FILES = "score*.json"
WALK_KINDS = ("move", "move_stopped", "placed")


def _clock(start: datetime | None, t: float) -> str:
    if start is None:
        return f"+{t:.0f}s"
    return (start + timedelta(seconds=t)).strftime("%a %H:%M:%S")


def run_data(run_dir: Path, scrub: Scrubber, *, replay: bool = True) -> dict[str, Any]:
    """Everything an item page shows of `run_dir`; `replay=False` leaves the map out."""
    run_dir = Path(run_dir)
    outcome = run_outcome(run_dir)
    data: dict[str, Any] = {"state": outcome.state, "reason": scrub.text(outcome.reason),
                            "degraded": outcome.degraded, "problems": [], "conversations": [],
                            "judgments": [], "scores": [], "calls": None, "replay": None}
    try:
        run = load_run(run_dir)
    except RunFormatError as exc:
        data["problems"].append(scrub.text(str(exc)))
        data["damaged"] = True
        return data
    header = run.header
    config = header.config or {}
    data.update({
        "scenario": header.scenario, "seed": header.seed,
        "start_time": header.start_time.isoformat(sep=" "), "world": scrub.text(header.world or ""),
        "models": scrub.data(header.models), "backend": scrub.data(header.backend),
        "model_names": scrub.data(header.model_names()),  # as the page says them
        "code_version": header.code_version,
        "config": scrub.data({k: v for k, v in config.items() if k != "command"}),
        **_reproduce(config, scrub),
        "result": scrub.data(run.result.model_dump()) if run.result else None,
        "events": len(run.events),
        "kinds": dict(Counter(e.kind for e in run.events).most_common()),
    })
    data["problems"] += [scrub.text(f"{p.file} line {p.line}: {p.reason}") for p in run.problems]
    data["calls"] = _calls(run.calls)
    judged, data["judgments"], unreadable = _judgments(run_dir, config, scrub)
    data["problems"] += unreadable
    data["conversations"] = _conversations(run.events, header.start_time, judged, scrub)
    data["scores"] = _scores(run_dir, scrub, data["problems"])
    if replay and any(e.kind in WALK_KINDS for e in run.events):
        data["replay"] = _replay(run_dir, header, run.events, scrub, data["problems"])
    data["damaged"] = bool(data["problems"]) or outcome.state != "finished"
    return data


# Files a command reads that a report does not copy: a value with one of these endings, or a
# person's script of answers (`--human-ui script:FILE`).
READ_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl", ".txt", ".csv", ".py", ".j2")


def _reproduce(config: dict[str, Any], scrub: Scrubber) -> dict[str, Any]:
    """The command that remakes this run, what to know about it, and the files it reads that
    the site does not hold. A fork's own `sandbox fork ...` (its header's last fork), not the
    parent's command it carries; a benchmark's item, the benchmark's command (it remakes the
    item from its cache once the item's result.json is gone; `sandbox rerun ITEM` remakes it
    into another directory)."""
    forks = config.get("forks") or []
    fork = forks[-1] if forks and isinstance(forks[-1], dict) else {}
    words, how = None, ""
    if fork.get("command"):
        words = fork["command"]
        how = (f"a fork of {fork.get('parent', '?')} at {fork.get('time', '?')}: this command "
               "remakes it from its parent, which must be there with its cache")
    elif isinstance(config.get("command"), list):
        words = config["command"]
    elif isinstance(config.get("benchmark_command"), list):
        words = config["benchmark_command"]
        how = ("the benchmark's command that made this item: `sandbox rerun ITEM --out NEW` "
               "remakes the item from its cache (or remove the item's result.json and run "
               "this command again)")
    if not words:
        return {"command": None, "command_how": "", "reads": []}
    words = [str(w) for w in words]
    return {"command": scrub.text(shlex.join(words)), "command_how": scrub.text(how),
            "reads": [scrub.data(r) for r in files_read(words)]}


def files_read(words: list[str]) -> list[dict[str, str]]:
    """The files a command's words name for it to read: {"file", "as"} (the option, or
    "argument"). A person's script of answers (`--human-ui script:FILE`) says so."""
    found: list[dict[str, str]] = []
    option = "argument"
    for word in words[2:]:  # past `sandbox COMMAND`
        if word.startswith("--"):
            option, _, value = word.partition("=")
            if not value:
                continue
        else:
            value = word
        if value.startswith("script:"):
            found.append({"file": value[len("script:"):],
                          "as": f"{option}: a person's script of answers"})
        elif value.lower().endswith(READ_SUFFIXES):
            found.append({"file": value, "as": option})
        option = "argument"
    return found


def _calls(calls: list) -> dict[str, Any]:
    """Calls and tokens by role, model and purpose (the call's tag), with what went wrong in
    them (a record without a role, written before roles were, counts under none)."""
    by_tag: dict[tuple[str, str, str], dict[str, Any]] = {}
    for call in calls:
        role, model = getattr(call, "role", None) or "", _model(call)
        row = by_tag.setdefault((role, model, call.tag), {
            "role": role, "model": model, "tag": call.tag, "calls": 0, "prompt_tokens": 0,
            "completion_tokens": 0, "cached": 0, "retries": 0, "faults": 0})
        row["calls"] += 1
        row["prompt_tokens"] += call.prompt_tokens
        row["completion_tokens"] += call.completion_tokens
        row["cached"] += int(bool(call.cached))
        row["retries"] += call.retries
        row["faults"] += len(call.faults)
    rows = sorted(by_tag.values(), key=lambda r: -r["calls"])
    total = {key: sum(r[key] for r in rows) for key in
             ("calls", "prompt_tokens", "completion_tokens", "cached", "retries", "faults")}
    models = sorted({_model(call) for call in calls} - {""})
    return {"total": total, "by_tag": rows, "models": models}


def _model(call) -> str:
    """The model that answered a call as named everywhere: "alias (model id)" when a models
    file's alias stood behind it (two aliases of one model id are two models)."""
    from sandbox.llm import model_name

    model = getattr(call, "model", "") or ""
    return model_name(model, getattr(call, "endpoint", None)) if model else ""


def _judgments(run_dir: Path, config: dict[str, Any], scrub: Scrubber):
    """(verdicts by (conversation, turn), the judgments, problems of unreadable files)."""
    conversation = str(config.get("conversation", "c0"))
    found, unreadable = read_judgments(run_dir)
    judged: dict[tuple[str, int], list[dict[str, Any]]] = {}
    judgments = []
    for judgment in found:
        usable = judgment.status == "ok"
        judgments.append(scrub.data({
            "judge": judgment.judge, "model": judgment.model, "status": judgment.status,
            "scores": judgment.scores, "flags": judgment.flags, "faults": judgment.faults,
            "turns": len(judgment.turns), **_turn_means(judgment.turns),
            "prompt_tokens": judgment.prompt_tokens,
            "completion_tokens": judgment.completion_tokens, "cached": judgment.cached}))
        for verdict in judgment.turns:
            judged.setdefault((conversation, verdict.turn), []).append(scrub.data({
                "judge": judgment.judge, "model": judgment.model, "status": judgment.status,
                "usable": usable, "scores": verdict.scores, "flags": verdict.flags,
                "notes": verdict.notes}))
    problems = [scrub.text(f"judgments/{Path(u.path).name}: {u.reason}") for u in unreadable]
    return judged, judgments, problems


def _turn_means(turns: list) -> dict[str, Any]:
    """What a judge's verdicts on the turns carry, per metric: the mean score over the turns
    that have it and how many ("turn_scores"), and how many turns raised each flag of how
    many ("turn_flags"). A judge that scores turns only gives nothing at the item level."""
    scores: dict[str, list[float]] = {}
    flags: dict[str, list[bool]] = {}
    for verdict in turns:
        for key, value in verdict.scores.items():
            scores.setdefault(key, []).append(value)
        for key, value in verdict.flags.items():
            flags.setdefault(key, []).append(value)
    return {"turn_scores": {k: {"mean": round(fmean(v), 4), "n": len(v)}
                            for k, v in scores.items()},
            "turn_flags": {k: {"raised": sum(v), "n": len(v)} for k, v in flags.items()}}


def _judging_events(events: list[Event]) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Verdicts a benchmark logs as events (a kind naming a judgment or score, with a turn)."""
    found: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for event in events:
        if "judg" not in event.kind and "score" not in event.kind:
            continue
        turn = _get(event, "turn")
        if not isinstance(turn, int):
            continue
        fields = {k: v for k, v in event.model_dump().items()
                  if k not in ("kind", "t", "agent", "turn", "conversation")}
        scores = {k: v for k, v in fields.items()
                  if isinstance(v, int | float) and not isinstance(v, bool)}
        for value in fields.values():
            if isinstance(value, dict):
                scores.update({k: v for k, v in value.items()
                               if isinstance(v, int | float) and not isinstance(v, bool)})
        flags = {k: v for k, v in fields.items() if isinstance(v, bool)}
        notes = {k: v for k, v in fields.items() if isinstance(v, str) and k != "judge"}
        found.setdefault((str(_get(event, "conversation", "")), turn), []).append({
            "judge": str(_get(event, "judge") or event.agent or event.kind), "model": "",
            "status": "ok", "usable": True, "scores": scores, "flags": flags, "notes": notes})
    return found


def _conversations(events: list[Event], start: datetime, judged, scrub: Scrubber) -> list:
    """Every conversation's turns in order, each with the verdicts on it."""
    for key, verdicts in _judging_events(events).items():
        judged.setdefault(key, []).extend(scrub.data(verdicts))
    conversations: dict[str, dict[str, Any]] = {}
    for event in events:
        conv = _get(event, "conversation")
        if conv is None:
            continue
        entry = conversations.setdefault(str(conv), {
            "id": str(conv), "start": event.t, "clock": _clock(start, event.t),
            "participants": [], "location": "", "turns": []})
        if event.kind == "conversation_started":
            entry["participants"] = [str(p) for p in _get(event, "participants", [])]
            entry["location"] = scrub.text(str(_get(event, "location", "")))
        elif event.kind == "utterance":
            turn = _get(event, "turn")
            entry["turns"].append({
                "t": event.t, "clock": _clock(start, event.t), "turn": turn,
                "speaker": event.agent or "", "to": [str(p) for p in _get(event, "to", [])],
                "text": scrub.text(str(_get(event, "text", ""))),
                "verdicts": judged.get((str(conv), turn), []) if isinstance(turn, int) else []})
    for entry in conversations.values():
        if not entry["participants"]:
            entry["participants"] = list(dict.fromkeys(t["speaker"] for t in entry["turns"]))
    return [c for c in conversations.values() if c["turns"]]


def _scores(run_dir: Path, scrub: Scrubber, problems: list[str]) -> list[dict[str, Any]]:
    """score.json and the other rule sets' scores beside it, as written (evidence included)."""
    scores = []
    for path in sorted(run_dir.glob(SCORE_FILES)):
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            problems.append(f"{path.name}: not valid JSON ({type(exc).__name__})")
            continue
        if not isinstance(raw, dict):
            problems.append(f"{path.name}: not a score (expected a JSON object)")
            continue
        scores.append({"file": path.name, **scrub.data(raw)})
    return scores


def _replay(run_dir: Path, header, events: list[Event], scrub: Scrubber,
            problems: list[str]) -> dict[str, Any] | None:
    """The map's tiles, each agent's legs on the events' timeline, and what was said: the
    viewer's own map (`WorldMap`) and legs (`Positions`, the track the scorers read too)."""
    from ..positions import Positions
    from ..source import ReplayError
    from ..worldmap import find_world_file

    path = find_world_file(header.world, run_dir)
    if path is None:
        problems.append(scrub.text(f"the run's world {header.world!r} was not found: "
                                   "no map replay"))
        return None
    try:
        world, drawn = _world(Path(path).resolve(), Path(path).stat().st_mtime_ns)
    except (ReplayError, OSError) as exc:
        problems.append(scrub.text(str(exc)))
        return None
    positions = Positions(world.tile_of)
    ordered = sorted(events, key=lambda e: e.t)
    positions.add(ordered)
    tracks: dict[str, list] = {}
    for event in ordered:
        if not event.agent or (event.kind not in WALK_KINDS and event.kind != "agent_joined"):
            continue
        legs = tracks.setdefault(event.agent, [])
        leg = positions.leg(event.agent, event.t)
        if leg is None or (legs and legs[-1][0] is leg):
            continue
        legs.append((leg, _leg_data(leg)))
    agents = [{"name": name, "legs": [data for _, data in legs]}
              for name, legs in tracks.items()]
    speech = [[e.t, e.agent or "", scrub.text(str(_get(e, "text", ""))),
               str(_get(e, "conversation", ""))] for e in ordered if e.kind == "utterance"]
    actions = [[e.t, e.agent, scrub.text(str(_get(e, "description", "")))]
               for e in ordered if e.kind == "action_started" and e.agent]
    end = max((e.t for e in events), default=0.0)
    return {"map": drawn, "agents": agents, "speech": speech, "actions": actions,
            "end": end, "start_time": header.start_time.isoformat(sep=" ")}


def _leg_data(leg) -> list:
    """[t0, seconds per tile, last index, [x0, y0, x1, y1, ...]]: on path[i] from
    t0 + i * seconds per tile (worlds.Leg); a standing leg has no seconds and one tile."""
    if leg.path is None:
        return [round(leg.t, 3), 0, 0, list(leg.tile)]
    last = leg.last_index
    return [round(leg.t, 3), leg.seconds_per_tile, last,
            [c for tile in leg.path[:last + 1] for c in tile]]


@lru_cache(maxsize=4)
def _world(path: Path, mtime_ns: int):
    """A map file read and drawn once per report (a suite's episodes share their town)."""
    from ..worldmap import load_world_map

    world = load_world_map(path)
    return world, map_data(world)


def map_data(world) -> dict[str, Any]:
    """A world's tiles as rows of palette indices, coloured as the pygame viewer colours them
    (`viewer.draw.mapimage`), and its sectors' and arenas' names where the viewer puts them."""
    from ..draw import theme
    from ..draw.mapimage import arena_colour, terrain_colour

    def hex_colour(rgb) -> str:
        return "#" + "".join(f"{int(c):02x}" for c in rgb[:3])

    palette: list[str] = [hex_colour(theme.VOID)]
    index: dict[str, int] = {palette[0]: 0}

    def colour(rgb) -> int:
        key = hex_colour(rgb)
        if key not in index:
            index[key] = len(palette)
            palette.append(key)
        return index[key]

    grid = [[0] * world.width for _ in range(world.height)]
    for (x, y), terrain in world.blocked.items():
        grid[y][x] = colour(terrain_colour(world, terrain))
    arena_rgb = {a: arena_colour(world, a) for a in world.arenas}
    for (x, y), arena in world.arena_of.items():
        grid[y][x] = colour(arena_rgb[arena])
    for x, y in world.object_of:
        if (x, y) in world.arena_of:
            grid[y][x] = colour(theme.shade(arena_rgb[world.arena_of[(x, y)]], 0.78))
    def label(place, sector: int) -> list:
        # [name, x, y, sector?, width in tiles]: a sector's name on its top wall, as the
        # viewer puts it, an arena's at its centre; the page drops those that do not fit.
        xs = [x for x, _ in place.tiles]
        y = min(y for _, y in place.tiles) if sector else place.centre[1]
        return [place.name, (min(xs) + max(xs) + 1) / 2, y, sector, max(xs) - min(xs) + 1]

    by_size = sorted(world.sectors.values(), key=lambda p: -len(p.tiles))
    labels = [label(p, 1) for p in by_size if p.tiles]
    sector_names = {p.name for p in world.sectors.values()}
    labels += [label(p, 0) for p in sorted(world.arenas.values(), key=lambda p: -len(p.tiles))
               if p.tiles and p.name not in sector_names]
    return {"name": world.name, "title": world.title, "width": world.width,
            "height": world.height, "palette": palette, "rows": grid, "labels": labels}
