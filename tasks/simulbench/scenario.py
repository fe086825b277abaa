"""SimulBench dialogues as single-room episodes: a user and a simulator alone in one room.

Two policies on the kit's DialogueScenario:

- `CollectScenario` (stage 1): the task's first turn, then the user agent (an LLM at temperature
  1.2) and the simulator take turns for `TURNS` user turns (8 utterances).
- `AnswerScenario` (stages 3-4): a test script's history is replayed as it is stored (no model
  speaks it), then the model under test answers the final user query once.

The simulator is asked with [system "You are a helpful assistant."] + the history as raw chat
messages, exactly the script's `dialogue_history` when answering; its reply is normalised as in
the original (whitespace stripped, one leading and one trailing double quote dropped).
"""

from __future__ import annotations

from typing import Any

from agents.chat import ChatTurn
from sandbox.engine import Engine
from sandbox.events import Utterance
from sandbox.llm import LLMRequest, Message
from tasks.kit import CONVERSATION, Cast, DialogueScenario

from .models import SYSTEM_PROMPT, TURNS, Script, SimTask
from .user_agent import UserAgent

SIMULATOR_TAG = "simulbench.simulator"
USER = "User"
SIMULATOR = "Simulator"
COLLECT = "simulbench-collect"
ANSWER = "simulbench"


def normalize(reply: str) -> str:
    """The original's clean-up of every simulator reply."""
    text = reply.strip()
    if text.startswith('"'):
        text = text[1:]
        if text.endswith('"'):
            text = text[:-1]
    return text


class History:
    """The dialogue as raw chat messages, shared by both speakers (an utterance in the log is
    stripped of surrounding whitespace; the model must see the exact text)."""

    def __init__(self, messages: list[Message] | None = None):
        self.messages: list[Message] = list(messages or [])


class ScriptedUser:
    """Says the given user lines in order (the first turn, or a script's replayed queries)."""

    def __init__(self, history: History, lines: list[str], then=None):
        self.name = USER
        self.history = history
        self.lines = list(lines)
        self.then = then  # who speaks once the lines are said (the user agent), or None

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int):
        if self.lines:
            yield engine.timeout(0)
            text = self.lines.pop(0)
        else:
            text = yield from self.then.request(engine, self.history)
        self.history.messages.append(Message(role="user", content=text))
        return ChatTurn(utterance=text)


class Simulator:
    """The model acting as the simulator; replays `replay` first (a script's stored answers)."""

    def __init__(self, history: History, *, llm, sampling, replay: list[str] | None = None,
                 last_turn: int | None = None):
        self.name = SIMULATOR
        self.history = history
        self.llm = llm
        self.sampling = sampling
        self.replay = list(replay or [])
        self.last_turn = last_turn  # the utterance that ends the dialogue, if any

    def speak(self, engine: Engine, transcript: list[Utterance], partners: list[str],
              place: str, situation: str, max_turns: int):
        if self.replay:
            yield engine.timeout(0)
            text = self.replay.pop(0)
            self.history.messages.append(Message(role="assistant", content=text))
            return ChatTurn(utterance=text)
        request = LLMRequest(
            messages=[Message(role="system", content=SYSTEM_PROMPT), *self.history.messages],
            tag=SIMULATOR_TAG, agent=self.name, temperature=self.sampling.temperature,
            top_p=self.sampling.top_p, max_tokens=self.sampling.max_tokens)
        completion = yield engine.ask(request, llm=self.llm)
        text = normalize(completion.text)
        self.history.messages.append(Message(role="assistant", content=text))
        ends = self.last_turn is not None and len(transcript) + 1 >= self.last_turn
        return ChatTurn(utterance=text, end_conversation=ends)


class CollectScenario(DialogueScenario):
    """Stage 1: one collected dialogue of a task (its `dialogue`-th of three)."""

    benchmark = name = COLLECT
    first = 0

    def __init__(self, task: SimTask, dialogue: int, cast: Cast, turns: int = TURNS,
                 turn_labels: str = "ours"):
        super().__init__(cast)
        self.task, self.index, self.turns = task, dialogue, turns
        self.turn_labels = turn_labels  # how its challenge judge numbers turns
        self.max_turns = 2 * turns

    def item_config(self) -> dict[str, Any]:
        return {"task": self.task.model_dump(mode="json"), "dialogue": self.index,
                "turns": self.turns, "turn_labels": self.turn_labels,
                "conversation": CONVERSATION}

    def speakers(self) -> list:
        history = History()
        sampling = self.cast.sampling
        agent = UserAgent(self.task, llm=self.cast.llm("user"), sampling=sampling["user"])
        return [ScriptedUser(history, [self.task.task_description], then=agent),
                Simulator(history, llm=self.cast.llm("simulator"),
                          sampling=sampling["simulator"], last_turn=self.max_turns)]

    def joined(self, speaker) -> dict[str, str]:
        who = "a user agent trying the simulation" if speaker.name == USER \
            else f"the simulator of {self.task.act}"
        return {"persona": who, "architecture": "simulbench"}


class AnswerScenario(DialogueScenario):
    """Stages 3-4: a test script replayed, then the model under test answers its last query."""

    benchmark = name = ANSWER
    first = 0

    def __init__(self, script: Script, cast: Cast):
        super().__init__(cast)
        self.script = script
        self.max_turns = len(script.dialogue_history) + 1

    def item_config(self) -> dict[str, Any]:
        return {"script": self.script.public(), "category": self.script.category,
                "conversation": CONVERSATION}

    def speakers(self) -> list:
        history = History()
        said = self.script.dialogue_history
        return [ScriptedUser(history, [m.content for m in said if m.role == "user"]),
                Simulator(history, llm=self.cast.llm("simulator"),
                          sampling=self.cast.sampling["simulator"],
                          replay=[m.content for m in said if m.role == "assistant"],
                          last_turn=self.max_turns)]

    def joined(self, speaker) -> dict[str, str]:
        who = "the test script's user (replayed)" if speaker.name == USER \
            else f"the model under test, simulating {self.script.act}"
        return {"persona": who, "architecture": "simulbench"}
