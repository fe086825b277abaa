"""`sandbox log`: what happened in a run, from its directory alone."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import timedelta
from typing import Any

from rich.console import Console
from rich.table import Table

from . import terminal
from .log import RESULT, Run


def summarize(run: Run) -> dict[str, Any]:
    by_tag: dict[str, Counter] = defaultdict(Counter)
    by_model: dict[str, Counter] = defaultdict(Counter)
    faults: Counter = Counter()
    for call in run.calls:
        for row in (by_tag[call.tag], by_model[answered_by(call)]):
            row["calls"] += 1
            row["answers"] += call.attempts  # an unusable answer asked again: both paid
            row["prompt_tokens"] += call.prompt_tokens
            row["completion_tokens"] += call.completion_tokens
            row["cache_hits"] += int(call.cached)
            row["retries"] += call.retries
            row["faults"] += len(call.faults)
            row["latency_ms"] += int(call.latency_s * 1000)
        faults.update(call.faults)
    # Who answered each agent's calls, by model as named everywhere: a resident whose calls
    # went to two models (the performer under a routing) is listed under both, not under the
    # one the header stands it for.
    answered: dict[str, Counter] = defaultdict(Counter)
    by_role: dict[str, Counter] = defaultdict(Counter)
    for call in run.calls:
        if call.agent:
            from .llm import model_name

            answered[call.agent][model_name(call.model, call.endpoint)] += 1
            by_role[call.agent][call.role or ""] += 1
    return {
        "llm_calls_by_agent_day_module": calls_by_agent_day_module(run),
        "run": str(run.dir),
        "scenario": run.header.scenario,
        "seed": run.header.seed,
        "models": run.header.models,
        "roles_by_agent": roles_by_agent(run.header.config, by_role),
        "role_names": role_names(run.header.config),
        "models_answering": {agent: dict(found) for agent, found in answered.items()},
        "status": _status(run),
        "error": run.result.error if run.result else None,
        "warnings": run.result.warnings if run.result else [],
        # written, skipped (why), restored from (sandbox/checkpoint.py)
        "checkpoints": [run.result.checkpoints, run.result.checkpoints_skipped,
                        run.result.restored_from] if run.result else [0, [], None],
        # (fallbacks, share) when more of the calls fell back than SANDBOX_DEGRADED_ABOVE allows
        "degraded": [run.result.fallbacks, run.result.fallback_fraction]
        if run.result and run.result.degraded else None,
        "events_by_kind": dict(Counter(e.kind for e in run.events)),
        "llm_calls_by_purpose": {tag: dict(c) for tag, c in sorted(by_tag.items())},
        # "model" or "role: alias (model)": what each model answered (and costs)
        "llm_calls_by_model": {who: dict(c) for who, c in sorted(by_model.items())},
        "llm_faults": dict(faults),
        "sim_time_s": max((e.t for e in run.events), default=0.0),
        "wall_time_s": run.result.wall_time_s if run.result else None,
        "problems": [p.model_dump() for p in run.problems],
        "judgments": judgments(run),
        "prefix_reuse": prefix_reuse(run),
        "forks": forks(run),
        "schedule": schedule(run),
    }


def schedule(run: Run) -> dict[str, Any] | None:
    """The run against its bound: the critical path (the longest chain of calls each of which
    had to wait for the one before: its asker's previous call, its conversation partner's
    line, whom it perceived; the engine keeps each call's `depth`), the calls, how they were
    sent (result.json) and how many were in flight on average (their latency over the wall
    time, calls answered from the cache aside). None for a run without depths (a single room,
    a run from before residents ran ahead)."""
    depths = [c.depth for c in run.calls if c.depth is not None]
    if not depths:
        return None
    result = run.result
    asked = [c for c in run.calls if not c.cached]
    wall = result.wall_time_s if result else None
    return {"critical_path": max(depths), "calls": len(run.calls),
            "schedule": result.schedule if result else None,
            "sends": result.sends if result else None,
            "peak_in_flight": result.peak_in_flight if result else None,
            "in_flight": (sum(c.latency_s for c in asked) / wall) if asked and wall else None}


def answered_by(call) -> str:
    """Who answered a call, as `sandbox log` groups them: its role (when it was made in one)
    and its model as named everywhere ("alias (model id)" when named by an alias)."""
    from .llm import model_name

    who = model_name(call.model, call.endpoint)
    return f"{call.role}: {who}" if call.role else who


def roles_by_agent(config: dict[str, Any], calls: dict[str, Counter] | None = None
                   ) -> dict[str, list[list[Any]]]:
    """The agents whose purposes the run header says were split between roles (config.roles:
    `purposes`, agent -> role -> its purposes or "every other purpose"), each with
    [role and model as named everywhere, what it answers, its calls in `calls` (agent -> role
    -> count)] per role, in the header's order. Empty for a run of one model per agent."""
    roles = config.get("roles")
    split = roles.get("purposes") if isinstance(roles, dict) else None
    if not isinstance(split, dict):
        return {}
    out: dict[str, list[list[Any]]] = {}
    for agent, by_role in split.items():
        if not isinstance(by_role, dict) or len(by_role) < 2:
            continue  # one role answers every purpose of it: nothing split
        said = []
        for role, purposes in by_role.items():
            who = roles.get(role)
            name = who.get("name") or who.get("model") if isinstance(who, dict) else None
            what = ", ".join(map(str, purposes)) if isinstance(purposes, list) else str(purposes)
            said.append([f"{role}: {name}" if name else role, what,
                         (calls or {}).get(agent, Counter())[role]])
        out[str(agent)] = said
    return out


def role_names(config: dict[str, Any]) -> dict[str, str]:
    """Each role the header's config.roles says what it resolved to, by its name there
    ("alias (model id)")."""
    roles = config.get("roles")
    if not isinstance(roles, dict):
        return {}
    return {str(role): who["name"] for role, who in roles.items()
            if isinstance(who, dict) and isinstance(who.get("name"), str)}


def models_said(summary: dict[str, Any]) -> list[str]:
    """Each agent with the model(s) that answered its calls: "NAME=MODEL", or, when its calls
    went to several, each with its count ("NAME=B (y) for 7 calls and A (x) for 3"); the header's
    model for an agent with no call. An agent whose purposes the header says were split
    between roles is said with each role's model and purposes, whatever its calls."""
    answering = summary.get("models_answering") or {}
    split = summary.get("roles_by_agent") or {}
    out = []
    for agent, model in summary["models"].items():
        found = answering.get(agent) or {}
        if agent in split:
            out.append(f"{agent}=" + " and ".join(
                f"{who} for {what} ({n} call{'s' * (n != 1)})" for who, what, n in split[agent]))
        elif len(found) > 1:
            out.append(f"{agent}=" + " and ".join(
                f"{who} for {n} call{'s' * (n != 1)}"
                for who, n in sorted(found.items(), key=lambda kv: -kv[1])))
        else:  # a role the header says what it resolved to (a kit run's): by its name
            named = (summary.get("role_names") or {}).get(agent, model)
            out.append(f"{agent}={next(iter(found), named)}")
    return out


def schedule_line(s: dict[str, Any]) -> str:
    """The run against its bound, in one line."""
    line = f"critical path: {s['critical_path']} of {s['calls']} calls"
    if s.get("schedule"):
        line += (f"; ran {s['schedule']}: sent {s['sends']} times, "
                 f"at most {s['peak_in_flight']} in flight")
        if s.get("in_flight") is not None:
            line += f", {s['in_flight']:.1f} on average"
    return line


def forks(run: Run) -> list[str]:
    """A fork's chain (`sandbox fork`, its header's config.forks), oldest first, in words:
    parent, fork point, changes, and which changed modules started fresh."""
    said = []
    for fork in run.header.config.get("forks") or []:
        if not isinstance(fork, dict):
            continue
        changes = [f"{name} -> {arch}" for name, arch in (fork.get("architectures") or {}
                                                           ).items()]
        changes += [f"whisper {w.get('agent')}@{w.get('at')}" for w in fork.get("whispers") or []
                    if isinstance(w, dict)]
        fresh = [f"{name}'s {slot}" for name, slots in (fork.get("modules") or {}).items()
                 if isinstance(slots, dict) for slot, why in slots.items() if why]
        said.append(f"{fork.get('parent')} at {fork.get('time')}: "
                    f"{'; '.join(changes) or 'nothing changed'}"
                    + (f" (fresh: {', '.join(fresh)})" if fresh else ""))
    return said


def prefix_reuse(run: Run) -> dict[str, Any]:
    """How much evaluation the local backend saved: prompt tokens its prefix reuse did not
    evaluate again, answer tokens it wrote in as the grammar dictated them (calls answered from
    the answer cache evaluate nothing and are left out)."""
    live = [c for c in run.calls if not c.cached]
    return {"calls": len(live), "restored": sum(c.prefix_restored for c in live),
            "prompt_tokens": sum(c.prompt_tokens for c in live),
            "tokens_reused": sum(c.prefix_tokens for c in live),
            "restore_s": round(sum(c.prefix_restore_s for c in live), 3),
            "completion_tokens": sum(c.completion_tokens for c in live),
            "tokens_dictated": sum(c.dictated_tokens for c in live)}


def _status(run: Run) -> str:
    if run.result is not None:
        return run.result.status
    if any(p.file == RESULT for p in run.problems):
        return "unknown (result.json unreadable)"  # there, so the run did end somehow
    return "unfinished (no result.json)"


def judgments(run: Run) -> list[dict[str, Any]]:
    """What each judge said of a run after it ended (`judgments/`, written by a single-room
    benchmark): judge, model, status, tokens, latency, cache hit, faults. (Their calls are in
    calls.jsonl too, with every other call.)"""
    from .judgments import load_judgments

    return [judgment.model_dump(include={"judge", "model", "status", "prompt_tokens",
                                         "completion_tokens", "latency_s", "cached", "faults"})
            for judgment in load_judgments(run.dir)]


def calls_by_agent_day_module(run: Run) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """agent -> game day -> module -> {calls, tokens}. The module is the first part of the
    purpose tag ("plan" of "plan.daily"); the day is the simulated date of the call."""
    table: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(Counter)))
    for call in run.calls:
        if call.agent is None:
            continue
        day = (run.header.start_time + timedelta(seconds=call.t or 0)).date().isoformat()
        cell = table[call.agent][day][call.tag.split(".")[0]]
        cell["calls"] += 1
        cell["tokens"] += call.prompt_tokens + call.completion_tokens
    return {agent: {day: {m: dict(c) for m, c in sorted(mods.items())}
                    for day, mods in sorted(days.items())} for agent, days in sorted(table.items())}


def print_agent_calls(table: dict, console: Console) -> None:
    """Calls per agent per game day, one column per module (omitted when no agent called)."""
    modules = sorted({m for days in table.values() for mods in days.values() for m in mods})
    if not table or not modules:
        return
    grid = Table(title="LLM calls per agent per game day, by module")
    for col in ("agent", "day", *modules, "all", "tokens"):
        grid.add_column(col, justify="left" if col in ("agent", "day") else "right",
                        overflow="fold")  # a long name wraps, never cut to "Okonk..."
    for agent, days in table.items():
        for day, mods in days.items():
            grid.add_row(agent, day, *(str(mods.get(m, {}).get("calls", 0)) for m in modules),
                         str(sum(c["calls"] for c in mods.values())),
                         str(sum(c["tokens"] for c in mods.values())))
    console.print(grid)


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    console = console or terminal.console()
    hours, rest = divmod(int(summary["sim_time_s"]), 3600)
    wall = summary["wall_time_s"]
    console.print(f"[bold]{summary['run']}[/]  scenario={summary['scenario']} "
                  f"seed={summary['seed']} status={summary['status']}")
    console.print("models: " + "; ".join(models_said(summary)), highlight=False)
    console.print(f"simulated time: {hours}h{rest // 60:02d}m{rest % 60:02d}s   "
                  f"wall time: {'-' if wall is None else f'{wall:.1f} s'}")
    for fork in summary.get("forks") or []:
        console.print(f"forked from {fork}", highlight=False)
    if summary.get("schedule"):
        console.print(schedule_line(summary["schedule"]), highlight=False)
    written, skipped, restored = summary.get("checkpoints") or [0, [], None]
    if written or restored is not None:
        console.print(f"checkpoints: {written} written"
                      + (f", restored from the one at {restored / 3600:g} h" if restored is not
                         None else "")
                      + " (`sandbox fork` and `sandbox rerun` start from them)", highlight=False)
    for why in skipped:
        console.print(f"[yellow]checkpoint not written:[/] {why}", highlight=False)
    if summary["error"]:
        console.print(f"[red]error:[/] {summary['error']}")
    for warning in summary.get("warnings") or []:
        console.print(f"[yellow]warning:[/] {warning}")
    if summary.get("degraded"):
        fallbacks, share = summary["degraded"]
        console.print(f"[yellow]degraded:[/] {fallbacks} LLM calls ({share:.0%}) fell back to a "
                      "default: the run's numbers rest mostly on canned answers")
    failed_walks = summary["events_by_kind"].get("walk_failed", 0)
    if failed_walks:
        console.print(f"[yellow]walks that could not happen:[/] {failed_walks} "
                      "(`sandbox log --events walk_failed` lists them)")

    events = Table(title="events by kind")
    events.add_column("kind", overflow="fold")
    events.add_column("count", justify="right")
    for kind, n in sorted(summary["events_by_kind"].items()):
        events.add_row(kind, str(n))
    console.print(events)

    calls = Table(title="LLM calls by purpose")
    for col in ("purpose", "calls", "tok in", "tok out", "cached", "retries", "faults", "ms/call"):
        calls.add_column(col, justify="left" if col == "purpose" else "right", overflow="fold")
    total: Counter = Counter()
    for tag, row in summary["llm_calls_by_purpose"].items():
        total.update(row)
        calls.add_row(tag, *_call_cells(row))
    if len(summary["llm_calls_by_purpose"]) > 1:
        calls.add_row("[bold]all[/]", *_call_cells(total))
    console.print(calls)
    if total["answers"] > total["calls"]:
        console.print(f"answers given: {total['answers']} for {total['calls']} calls (an "
                      "unusable answer asked again; the tokens above count every one)",
                      highlight=False)
    by_model = summary.get("llm_calls_by_model") or {}
    if len(by_model) > 1 or any(":" in who or "(" in who for who in by_model):
        models = Table(title="LLM calls by model (role: alias (model))")
        for col in ("answered by", "calls", "tok in", "tok out", "cached", "retries", "faults",
                    "ms/call"):
            models.add_column(col, justify="left" if col == "answered by" else "right",
                              overflow="fold")
        for who, row in by_model.items():
            models.add_row(who, *_call_cells(row))
        console.print(models)
    print_agent_calls(summary.get("llm_calls_by_agent_day_module", {}), console)
    reuse = summary.get("prefix_reuse") or {}
    if reuse.get("tokens_reused"):
        share = reuse["tokens_reused"] / max(reuse["prompt_tokens"], 1)
        console.print(f"prompt prefix reuse: {reuse['tokens_reused']} of "
                      f"{reuse['prompt_tokens']} prompt tokens not evaluated again ({share:.0%}); "
                      f"{reuse['restored']} of {reuse['calls']} calls restored a stored prefix "
                      f"({reuse['restore_s']:.2f} s restoring)")
    if reuse.get("tokens_dictated"):
        share = reuse["tokens_dictated"] / max(reuse["completion_tokens"], 1)
        console.print(f"dictated by the grammar: {reuse['tokens_dictated']} of "
                      f"{reuse['completion_tokens']} answer tokens written in, not sampled "
                      f"({share:.0%})")
    if summary["llm_faults"]:
        console.print("LLM faults: " + ", ".join(
            f"{kind}={n}" for kind, n in sorted(summary["llm_faults"].items())))
    else:
        console.print("LLM faults: none")
    if summary.get("judgments"):
        judged = Table(title="judge calls (after the run)")
        for col in ("judge", "model", "status", "tok in", "tok out", "cached", "faults", "ms"):
            judged.add_column(col, justify="left" if col in ("judge", "model", "status")
                              else "right", overflow="fold")
        for j in summary["judgments"]:
            judged.add_row(str(j["judge"]), str(j["model"]), str(j["status"]),
                           str(j["prompt_tokens"] or 0), str(j["completion_tokens"] or 0),
                           str(bool(j["cached"])),
                           ", ".join(j["faults"] or []) or "-",
                           f"{(j['latency_s'] or 0) * 1000:.0f}")
        console.print(judged)
    for problem in summary["problems"]:
        console.print(f"[yellow]log problem:[/] {problem['file']} line {problem['line']}: "
                      f"{problem['reason']}")


def _call_cells(row: dict | Counter) -> list[str]:
    n = row.get("calls", 0)
    mean = row.get("latency_ms", 0) / n if n else 0
    return [str(n), str(row.get("prompt_tokens", 0)), str(row.get("completion_tokens", 0)),
            str(row.get("cache_hits", 0)), str(row.get("retries", 0)),
            str(row.get("faults", 0)), f"{mean:.0f}"]
