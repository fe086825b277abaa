"""The generative agent: a host for one module per slot, living as a SimPy process in a town.

Its day: plan the day (planner), then action after action: walk to the action's place
(worlds.WorldState logs the move), log `action_started` and remember it, notice the agents in the
same arena (perception: new observations go to memory, importance scored in batches), maybe start
a conversation (conversation module decides), reflect when enough happened (reflector), and wait
until the action ends -- or until someone starts talking to it. After a conversation both sides
store a summary and revise the rest of their day; this is how an invitation becomes an action.

The host knows nothing about how a slot works: it calls the protocols of agents/protocols.py.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import simpy

from sandbox.checkpoint import NotResumable
from sandbox.engine import Engine, Process
from sandbox.events import Utterance
from sandbox.events.agent import ActionStarted, MemoryAdded, MemoryScored, PlacesLearned
from worlds import AddressError
from worlds.ville import invented

from .architecture import Architecture
from .chat import Progress, converse, go_on
from .memory import MemoryNode
from .persona import Persona
from .planning import Action


class ModuleSpeaker:
    """A generative agent as a speaker of `agents.chat.converse`: its conversation module words
    each line, from its own memories, to the one partner it talks with."""

    def __init__(self, agent: GenerativeAgent, partner: GenerativeAgent):
        self.agent, self.partner, self.name = agent, partner, agent.name

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int) -> Process:
        return (yield from self.agent.conversation.utterance(self.agent, self.partner,
                                                             transcript, engine))


def seconds_per_turn(conversation) -> float:
    """The sim time one utterance takes: the module's `params.seconds_per_turn`, or 15 s."""
    return getattr(getattr(conversation, "params", None), "seconds_per_turn", 15.0)


def vision_radius(memory) -> int:
    """How far the agent sees places as it walks: the memory module's `params.vision_radius`,
    or 0 (a module without one: what the agent knows never grows)."""
    return getattr(getattr(memory, "params", None), "vision_radius", 0)


@dataclass
class Talk:
    """A conversation in progress, as seen by the partner who did not start it."""

    id: str
    initiator: GenerativeAgent
    done: simpy.Event
    transcript: list[Utterance] = field(default_factory=list)


@dataclass
class Bookmark:
    """Where the agent's process waits between two instants, as data: what a checkpoint saves
    and `live(resume=...)` goes on from. `rest`: waiting out an action (until `until`, woken
    if someone talks to it when `can_talk`); `walk`: on the way to `action`'s place (the walk's
    own progress is the town's); `listen`: a partner waiting for the initiator to finish the
    conversation; `talk`: the initiator, while a line takes its time (`progress`)."""

    kind: str
    waiting: simpy.Event | None = None  # rest: the action's end
    until: float = 0.0
    can_talk: bool = False
    action: Action | None = None  # walk
    partner: str = ""  # talk
    place: str = ""
    max_turns: int = 0
    seconds_per_turn: float = 0.0
    progress: Progress | None = None


class GenerativeAgent:
    def __init__(self, persona: Persona, architecture: Architecture, *,
                 places: list[str] | None = None, attention: int = 3):
        self.persona = persona
        self.name = persona.name
        self.architecture = architecture
        modules = architecture.build()
        self.memory = modules["memory"]
        self.retriever = modules["retriever"]
        self.planner = modules["planner"]
        self.reflector = modules["reflector"]
        self.conversation = modules["conversation"]
        self.task_planner = modules["task_planner"]
        self.places: list[str] = list(places or [persona.living_area])
        self.attention = attention  # how many co-located agents are noticed at once
        self.location = persona.living_area
        self.action: Action | None = None
        self.task = ""
        self._task_taken = False
        self.talking: Talk | None = None  # set on the partner who did not start it
        self.talking_with: str | None = None  # set on both sides while they talk
        self.available = False  # waiting in an action: someone may start a conversation
        self._wake: simpy.Event | None = None
        self._at: Bookmark | None = None  # where the process waits (None: at work)
        self._talk: Talk | None = None  # the conversation it started and is in
        self.seen: dict[str, str] = {}  # last thing noticed about each other agent
        self.process: simpy.Process | None = None
        self._engine: Engine | None = None
        self._hook_memory()

    # -- what others see ------------------------------------------------------------------------
    @property
    def doing(self) -> str:
        if self.talking_with is not None:
            return f"talking with {self.talking_with}"
        return self.action.description if self.action else "idle"

    @property
    def asleep(self) -> bool:
        return self.action is not None and self.action.sleeping

    def give_task(self, task: str, currently: str | None = None) -> None:
        """Inject a social task: into `currently` (what every architecture sees, as in STSS)
        and, at the agent's next decision, into its task planner (TDP makes its plans then)."""
        self.persona = self.persona.model_copy(update={"currently": currently or task})
        self.task = task
        self._task_taken = False

    def _hook_memory(self) -> None:
        """Log the memory module's memories (its optional hooks, agents/protocols.py)."""
        for hook, log in (("on_added", self._log_memory), ("on_scored", self._log_score)):
            callbacks = getattr(self.memory, hook, None)
            if callbacks is not None and log not in callbacks:
                callbacks.append(log)

    def log_memory_to(self, engine: Engine) -> None:
        """Log this agent's memory to `engine` from now on, first the memories it already holds
        (a stream rebuilt from a run's log: each a `memory_added` at this moment, created when
        it was), so every id a later `memory_retrieved` names has been logged, as in the town."""
        self._engine = engine
        for node in getattr(self.memory, "nodes", []):
            self._log_memory(node, engine.now)

    def _log_memory(self, node: MemoryNode, t: float) -> None:
        if self._engine is not None:
            self._engine.emit(MemoryAdded(
                t=t, agent=self.name, memory=node.id, memory_kind=node.kind,
                description=node.description, importance=node.importance,
                created=node.created, evidence=node.evidence))

    def _log_score(self, node: MemoryNode, t: float) -> None:
        if self._engine is not None and node.importance is not None:
            self._engine.emit(MemoryScored(t=t, agent=self.name, memory=node.id,
                                           importance=node.importance))

    # -- the day --------------------------------------------------------------------------------
    def live(self, engine: Engine, society, resume: Bookmark | None = None) -> Process:
        """The agent's process: `engine.process(agent.live(engine, society))`; from a restored
        checkpoint, it first finishes what it was doing at `resume`."""
        self._engine = engine
        if resume is not None:
            yield from self._resume(engine, society, resume)
        while True:
            if self.task and not self._task_taken:
                self._task_taken = True
                yield from self.task_planner.assign(self, engine, self.task)
                if self._day_planned(engine):
                    yield from self.planner.revise(self, engine, f"new goal: {self.task}")
            action = yield from self.planner.next_action(self, engine)
            yield from self._go(engine, society, action)
            yield from self._arrived(engine, society, action)

    def _arrived(self, engine: Engine, society, action: Action) -> Process:
        """The action at its place: learn the places it passed, begin it, notice who is here,
        maybe talk, reflect, wait it out (or until someone talks to us)."""
        self._learn_places(engine, society.town)
        self._begin(engine, action)
        if not action.sleeping:
            yield from self._perceive(engine, society)
            yield from self._settle_and_reflect(engine)
            if self.action is None:  # it started a conversation: pick up the day afresh,
                return               # as its partner does (and notice who else is here)
        else:  # the day's last memories still waiting for a full batch are scored now
            yield from self.memory.settle(self, engine, force=True)
        if self.talking is None and engine.now < action.end:
            yield from self._wait(engine, action.end, can_talk=not action.sleeping)
        yield from self._listen(engine)

    def _settle_and_reflect(self, engine: Engine) -> Process:
        yield from self.memory.settle(self, engine)
        yield from self.reflector.maybe_reflect(self, engine)

    def _listen(self, engine: Engine) -> Process:
        if self.talking is not None:  # someone started talking to us
            talk = self.talking
            self._at = Bookmark("listen")
            yield talk.done
            self._at = None
            yield from self._after_conversation(engine, talk.initiator, talk.transcript)

    def _resume(self, engine: Engine, society, at: Bookmark) -> Process:
        """Finish the iteration of the day that a checkpoint saved at `at`, as `live` would
        have: the same waits (their timeouts scheduled again at their exact times), then the
        same steps after them."""
        if at.kind == "rest":
            yield from self._wait(engine, at.until, at.can_talk, waiting=at.waiting)
            yield from self._listen(engine)
        elif at.kind == "listen":
            yield from self._listen(engine)
        elif at.kind == "walk":
            assert at.action is not None
            self._at = at
            yield from society.town.walk_on(self.name, at.waiting)
            self._at = None
            self.location = str(society.town.arena_of(self.name))
            yield from self._arrived(engine, society, at.action)
        elif at.kind == "talk":
            assert self._talk is not None and at.progress is not None
            yield from self._talk_on(engine, society.agents[at.partner], self._talk, at)
            yield from self._settle_and_reflect(engine)
        else:
            raise ValueError(f"no way to resume {self.name} from {at.kind!r}")

    def _day_planned(self, engine: Engine) -> bool:
        needs_plan = getattr(self.planner, "needs_plan", None)  # optional hook
        # A planner that cannot tell is asked to revise anyway; the protocol lets it do nothing.
        return needs_plan is None or not needs_plan(engine)

    def _may_consider(self, other: GenerativeAgent, engine: Engine) -> bool:
        may_consider = getattr(self.conversation, "may_consider", None)  # optional hook
        return may_consider is None or may_consider(other.name, engine.now)

    def _changed_plans(self, partner: GenerativeAgent) -> bool:
        changed_plans = getattr(self.conversation, "changed_plans", None)  # optional hook
        return changed_plans is None or changed_plans(partner.name)

    def _go(self, engine: Engine, society, action: Action) -> Process:
        town = society.town
        if str(town.arena_of(self.name)) == action.address:
            return
        self._at = Bookmark("walk", action=action)
        try:
            yield from town.walk(self.name, action.address)
        except AddressError:
            # The world logged `walk_failed`; the agent knows it did not get there and does
            # the action where it is (the action's logged location says where that is).
            self.memory.add("event", f"{self.name} could not get to {action.address}",
                            engine.now, importance=3, subject=self.name)
        finally:
            self._at = None
        self.location = str(town.arena_of(self.name))

    def _learn_places(self, engine: Engine, town) -> None:
        """A resident with a spatial memory (the reference town's) learns the arenas within
        its vision radius of the tiles it passed, as the reference's perception grows its
        spatial memory; logged as `places_learned`. Places no walk from home reaches, and those
        the reference's map does not name (an imported town's `grounds`, its `outdoors`), are
        not learned. Without a spatial memory it knows every public place already."""
        radius = vision_radius(self.memory)
        if not self.persona.spatial_memory or radius <= 0:
            return
        world = town.world
        home = world.resolve(self.persona.living_area)
        known = set(self.places)
        new = {str(a) for a in world.arenas_near(town.walked(self.name), radius)
               if str(a) not in known and not invented(a) and world.reachable(a, home)}
        if not new:
            return
        order = [str(a) for a in world.arenas()]
        self.places = [a for a in order if a in known or a in new]
        engine.emit(PlacesLearned(t=engine.now, agent=self.name,
                                  places=[a for a in order if a in new], radius=radius))

    def _begin(self, engine: Engine, action: Action) -> None:
        previous = self.action
        self.action = action
        engine.emit(ActionStarted(t=engine.now, agent=self.name, description=action.description,
                                  location=self.location, until=action.end,
                                  activity=action.activity))
        if previous is None or previous.description != action.description:
            self.memory.add("event", f"{self.name} is {action.description}", engine.now,
                            importance=action.importance, subject=self.name)

    def _wait(self, engine: Engine, until: float, can_talk: bool,
              waiting: simpy.Event | None = None) -> Process:
        self._wake = engine.env.event()
        self.available = can_talk
        if waiting is None:
            waiting = engine.timeout(until - engine.now)
        self._at = Bookmark("rest", waiting=waiting, until=until, can_talk=can_talk)
        yield engine.env.any_of([waiting, self._wake])
        self._at = None
        self.available = False
        self._wake = None

    # -- perception and conversation ------------------------------------------------------------
    def _perceive(self, engine: Engine, society) -> Process:
        others = [society.agents[n] for n in society.town.sharing_arena(
            self.name, first=self.attention, among=society.agents)]
        for other in others:
            seen = f"{other.name} is {other.doing}"
            if self.seen.get(other.name) != seen:  # only what changed is worth a memory
                self.seen[other.name] = seen
                self.memory.add("event", seen, engine.now, subject=other.name)
        for other in others:
            if not self._can_talk_with(other, society) or not self._may_consider(other, engine):
                continue
            wants = yield from self.conversation.decide(self, other, engine)
            if wants and self._can_talk_with(other, society):  # still free after we thought
                yield from self._start_conversation(engine, other, society)
                return

    def _can_talk_with(self, other: GenerativeAgent, society) -> bool:
        return (other.available and other.talking is None and self.talking is None
                and not other.asleep and not self.asleep
                and society.town.arena_of(other.name) == society.town.arena_of(self.name))

    def _start_conversation(self, engine: Engine, other: GenerativeAgent, society) -> Process:
        # Its end is an event of the partner's: the partner's process waits on it, on its clock.
        talk = Talk(id=society.next_conversation_id(self.name), initiator=self,
                    done=engine.event_for(other.name, by=self.name))
        other.talking = talk
        other.available = False
        if other._wake is not None and not other._wake.triggered:
            other._wake.succeed()
        self.talking_with, other.talking_with = other.name, self.name
        for who, partner in ((self, other), (other, self)):
            engine.emit(ActionStarted(t=engine.now, agent=who.name,
                                      description=f"talking with {partner.name}",
                                      location=who.location, until=engine.now,
                                      activity="conversation"))
        # The initiator speaks first; the smaller cap of the two modules holds.
        at = Bookmark("talk", partner=other.name, place=self.location,
                      max_turns=min(self.conversation.max_turns, other.conversation.max_turns),
                      seconds_per_turn=seconds_per_turn(self.conversation), progress=Progress())
        yield from self._talk_on(engine, other, talk, at, start=True)

    def _talk_on(self, engine: Engine, other: GenerativeAgent, talk: Talk, at: Bookmark, *,
                 start: bool = False) -> Process:
        """The initiator's part of a conversation: from its start, or from `at.progress` (a
        restored checkpoint), to its end."""
        self._at, self._talk = at, talk
        talk.transcript = yield from (converse if start else go_on)(
            engine, [ModuleSpeaker(self, other), ModuleSpeaker(other, self)],
            conversation=talk.id, place=at.place, situation="", max_turns=at.max_turns,
            seconds_per_turn=at.seconds_per_turn, first=0, pause_after_end=True,
            progress=at.progress, aside=True)
        self._at = self._talk = None
        talk.done.succeed()
        yield from self._after_conversation(engine, other, talk.transcript)

    def _after_conversation(self, engine: Engine, partner: GenerativeAgent,
                            transcript: list[Utterance]) -> Process:
        summary = yield from self.conversation.remember(self, partner, transcript, engine)
        self.talking, self.talking_with = None, None
        if self._changed_plans(partner):
            yield from self.planner.revise(self, engine, f"{self.name} talked with "
                                                         f"{partner.name}: {summary}")
        self.action = None  # whatever comes next starts afresh

    # -- checkpoint -----------------------------------------------------------------------------
    def get_state(self) -> dict:
        return {"persona": self.persona.model_dump(), "task": self.task,
                "location": self.location, "seen": dict(self.seen), "places": list(self.places),
                "modules": {slot: getattr(self, slot).get_state() for slot in (
                    "memory", "retriever", "planner", "reflector", "conversation",
                    "task_planner")}}

    def change_architecture(self, architecture: Architecture) -> dict[str, str]:
        """Swap in `architecture`'s modules mid-episode (a fork), between two instants, when no
        module is waiting for an answer. A slot whose new module is of the old one's kind
        gets the old one's state (`get_state` -> `set_state`); any other starts fresh, as does
        one whose `set_state` refuses the state. Returns {slot: "" (carried) or why fresh}."""
        modules, fresh = architecture.build(), {}
        for slot, new in modules.items():
            old = getattr(self, slot)
            if type(new) is type(old):
                try:
                    new.set_state(old.get_state())
                except (KeyError, TypeError, ValueError) as exc:
                    new = architecture.classes[slot](architecture.params[slot])
                    fresh[slot] = f"its set_state refused the state ({type(exc).__name__})"
            else:
                fresh[slot] = f"a different module ({type(old).__name__} -> " \
                              f"{type(new).__name__})"
            setattr(self, slot, new)
        self._hook_memory()
        if "task_planner" in fresh and self.task:
            self._task_taken = False  # a fresh task planner takes the task at the next decision
        self.architecture = architecture
        return {slot: fresh.get(slot, "") for slot in modules}

    def checkpoint(self, town) -> tuple[dict, simpy.Event | None]:
        """The agent's state, where its process waits (JSON data) and the timeout it waits on
        (None: it waits for its partner to finish talking); NotResumable when its process is
        not at one of the places `live(resume=...)` can go on from."""
        at = self._at
        if at is None:
            raise NotResumable(f"{self.name}'s process is not waiting anywhere a checkpoint "
                               "can resume it from")
        where: dict = {"kind": at.kind}
        waiting = at.waiting
        if at.kind == "rest":
            where.update(until=at.until, can_talk=at.can_talk)
        elif at.kind == "walk":
            where["action"] = asdict(at.action)
            waiting = town.waiting(self.name)
        elif at.kind == "talk":
            where.update(partner=at.partner, place=at.place, max_turns=at.max_turns,
                         seconds_per_turn=at.seconds_per_turn, talk=self._talk.id,
                         transcript=[u.model_dump(mode="json") for u in at.progress.transcript])
            waiting = at.progress.waiting
        if (waiting is None) != (at.kind == "listen"):
            raise NotResumable(f"{self.name} is between two steps of its {at.kind!r}")
        talking = self.talking
        return {**self.get_state(), "architecture": self.architecture.describe(), "at": where,
                "action": asdict(self.action) if self.action else None,
                "task_taken": self._task_taken, "available": self.available,
                "talking": [talking.id, talking.initiator.name] if talking else None,
                "talking_with": self.talking_with}, waiting

    def restore(self, state: dict, waiting: simpy.Event | None) -> Bookmark:
        """Make this new agent (of the checkpoint's architecture) the one `checkpoint` saw;
        returns where its process goes on from (`live(resume=...)`). The conversations it is
        in are joined up by the society (`talking`, `_talk`)."""
        self.set_state(state)
        self._task_taken = state["task_taken"]
        self.action = Action(**state["action"]) if state["action"] else None
        self.available, self.talking_with = state["available"], state["talking_with"]
        where = dict(state["at"])
        kind = where.pop("kind")
        if kind == "walk":
            return Bookmark(kind, waiting=waiting, action=Action(**where["action"]))
        if kind == "talk":
            transcript = [Utterance.model_validate(u) for u in where.pop("transcript")]
            where.pop("talk")
            return Bookmark(kind, **where, progress=Progress(transcript, waiting))
        return Bookmark(kind, waiting=waiting, **where)

    def set_state(self, state: dict) -> None:
        self.persona = Persona(**state["persona"])
        self.task, self.location = state["task"], state["location"]
        self._task_taken = bool(self.task)
        self.seen = dict(state["seen"])
        if "places" in state:  # what it learned as it walked (a checkpoint before issue 47: none)
            self.places = list(state["places"])
        for slot, module_state in state["modules"].items():
            getattr(self, slot).set_state(module_state)
