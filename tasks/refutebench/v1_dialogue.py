"""One dialogue of a public RefuteBench 1.0 file as a single-room episode, played as 1.0's own
scripts play it (src/test_mt.py, test_email.py, test_email_multi.py).

The User says the file's queries in order and decides each `[MAYBE FEEDBACK]` slot by rule,
with no refuter model; the Assistant is the model under test, with the file's system prompt.
The header's `config.plan` lists every message the file can give (`v1_plan`); at run time a
slot can say less than the plan:

    given     the feedback turn is said and answered
    skipped   email: the answer before meets every choice; nothing is said, the next request
              follows (1.0's rule)
    conflict  MT: a feedback word's every sense is already a word of the answer before; the
              dialogue stops there (1.0 writes <CONFLICT> and ends it)

Every slot's decision is a RuleFeedback event (its plan step, what was asked for), so the
scoring aligns the utterances with the plan and reads the required translations and choices,
which come from the episode's seeded generator: the same seed gives the same dialogue.
"""

from __future__ import annotations

from typing import Any

from agents.chat import ChatTurn
from sandbox.engine import Engine, Process
from sandbox.events import ConversationEnded, ConversationStarted, Utterance
from tasks.kit import CONVERSATION, Cast, DialogueScenario

from .events import RuleFeedback
from .scenario import ASSISTANT, USER, Assistant, RefuteBenchScenario
from .v1 import FEEDBACK_SLOT, V1Item, draw_targets, feedback_text, slot_words
from .v1 import SETTING as V1_SETTING
from .v1_email import choose, email_feedback_text, email_slots

PLACE = "the room"
SECONDS_PER_TURN = 20.0  # as every other dialogue of the kit (agents.chat.converse)


def _slot_feedback(item: V1Item) -> list[dict[str, Any] | None]:
    """Per query of the file, what its slot's feedback is about (None: a query, or an MT slot
    with no word to give, which says nothing): an MT slot's `words`, an email slot's `rule`
    (the index of its feedback) and checker."""
    d = item.dialogue
    if item.format == "mt":
        return [{"focus": "word usage", "words": w} if w else None for w in slot_words(d)]
    return [None if j is None else {"focus": d.rules[j][0].checker, "rule": j}
            for j in email_slots(d)]


def v1_plan(item: V1Item) -> list[dict[str, Any]]:
    """A 1.0 dialogue's messages: its queries in order (`query` is the index in the file), each
    slot that may give feedback as a refutation (`words` in MT, `rule` in email); an MT slot
    with no word says nothing. The later queries of a multi-feedback file are of kind
    `sentence` (MT) or `email`."""
    d = item.dialogue
    queries = d.queries
    feedback = _slot_feedback(item)
    steps: list[dict[str, Any]] = []
    k = 0
    for i, query in enumerate(queries):
        if i == 0:
            kind: dict[str, Any] = {"kind": "task_query"}
        elif query == FEEDBACK_SLOT:
            if feedback[i] is None:
                continue
            k += 1
            kind = {"kind": "refutation", "k": k, **feedback[i]}
        elif d.multi:
            kind = {"kind": "sentence" if item.format == "mt" else "email"}
        elif i == len(queries) - 1:
            kind = {"kind": "re_ask" if query == queries[0] else "probe"}
        else:
            kind = {"kind": "distractor", "index": i - 2}
        response: dict[str, Any] = {"speaker": ASSISTANT, "kind": "response"}
        if kind["kind"] == "refutation":
            response["after"] = k
        if i == len(queries) - 1 and not d.multi:
            response["final"] = True
        steps += [{"speaker": USER, "query": i, **kind}, response]
    return steps


class V1User:
    """The user of a 1.0 dialogue: the file's queries, and each slot decided by rule."""

    name = USER

    def __init__(self, item: V1Item):
        self.item = item

    def turn(self, engine: Engine, index: int, step: dict[str, Any], before: str
             ) -> ChatTurn | RuleFeedback:
        """What the user says at plan step `index` (`before`: the answer just before): a
        ChatTurn, or the RuleFeedback of a slot that says nothing (skipped, conflict)."""
        d = self.item.dialogue
        if step["kind"] != "refutation":
            return ChatTurn(utterance=d.queries[step["query"]])
        decided = {"t": engine.now, "agent": self.name, "step": index, "k": step["k"]}
        if "rule" in step:  # email: a choice the answer before does not meet yet
            checker = d.rules[step["rule"]][0].checker
            choice = choose(d, step["rule"], before, engine.rng)
            if choice is None:
                return engine.emit(RuleFeedback(**decided, outcome="skipped", checker=checker))
            said = email_feedback_text(d, step["rule"], choice)
            engine.emit(RuleFeedback(**decided, outcome="given", checker=checker,
                                     choice=choice, said=said))
            return ChatTurn(utterance=said)
        targets = draw_targets(d, step["words"], before, self.item.language, engine.rng)
        if targets is None:
            return engine.emit(RuleFeedback(**decided, outcome="conflict"))
        said = feedback_text(d, targets)
        engine.emit(RuleFeedback(**decided, outcome="given", targets=targets, said=said))
        return ChatTurn(utterance=said)


DEVIATIONS = {
    "mt": ["1.0 feedback rule with its tools (spaCy, jieba, hebrew_tokenizer); the sense drawn "
           "by the episode's seeded generator (1.0: unseeded)"],
    "email": ["1.0 feedback rule and checkers; the choice drawn by the episode's seeded "
              "generator, langdetect seeded (1.0: unseeded)"],
}


class V1Scenario(RefuteBenchScenario):
    """One dialogue of a public 1.0 MT or email file, run unchanged."""

    def __init__(self, item: V1Item, cast: Cast):
        DialogueScenario.__init__(self, cast)
        self.item = item
        self.steps = v1_plan(item)
        self.max_turns = len(self.steps)

    def item_config(self) -> dict[str, Any]:
        d = self.item.dialogue
        return {"seed": f"{self.item.file}:{self.item.line}", "family": self.item.format,
                "kind": self.item.variant, "setting": V1_SETTING, "c": self.item.c,
                "query": d.queries[0], "plan": self.steps, "conversation": CONVERSATION,
                "v1": {"file": self.item.file, "line": self.item.line, "format": self.item.format,
                       "variant": self.item.variant, "word": d.word,
                       "language": self.item.language, "dialogue": d.model_dump(mode="json")},
                "deviations": DEVIATIONS[self.item.format]}

    def speakers(self) -> list:
        answer = self.cast.sampling["model"]
        return [V1User(self.item), Assistant(llm=self.cast.llm("model"),
                                             system=self.item.dialogue.system_prompt,
                                             **answer.model_dump())]

    def dialogue(self, engine: Engine, speakers: list) -> Process:
        """The plan's messages in order; a skipped slot drops its feedback and the answer to
        it, a conflict ends the dialogue (the user ends it)."""
        user, assistant = speakers
        engine.emit(ConversationStarted(t=engine.now, conversation=CONVERSATION,
                                        participants=[USER, ASSISTANT], location=PLACE))
        transcript: list[Utterance] = []
        reason = "max_turns"
        unanswered = False  # the step before was a slot that said nothing
        for index, step in enumerate(self.steps):
            if step["speaker"] == ASSISTANT:
                if unanswered:
                    unanswered = False
                    continue
                said = yield from assistant.speak(engine, transcript, [USER], PLACE, "",
                                                  self.max_turns)
            else:
                said = user.turn(engine, index, step, transcript[-1].text if transcript else "")
                if isinstance(said, RuleFeedback):
                    if said.outcome == "conflict":
                        reason = "ended_by_agent"
                        break
                    unanswered = True
                    continue
            speaker = step["speaker"]
            transcript.append(engine.emit(Utterance(
                t=engine.now, agent=speaker, conversation=CONVERSATION, turn=len(transcript),
                to=[ASSISTANT if speaker == USER else USER], text=said.utterance.strip())))
            yield engine.timeout(SECONDS_PER_TURN)
        engine.emit(ConversationEnded(t=engine.now, conversation=CONVERSATION,
                                      turns=len(transcript), reason=reason))
        return transcript
