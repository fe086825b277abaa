"""Scripted stand-ins for every PingPong role, for tests and dry runs (`scripted/pingpong`).

Deterministic: the same prompt gives the same answer. The player and the interrogator are
tasks.pingpong.scripted's; the judge scores from a hash of each reply and flags a reply as a
refusal when it contains one of REFUSAL_MARKERS.

    scripted/pingpong          all three roles; replies of moderate length
    scripted/pingpong-verbose  a player with replies about three times as long
    scripted/pingpong-strict   a judge that grades one point lower (never below 1)

The factories below are registered as entry points (pyproject.toml, group sandbox.scripted).
"""

from __future__ import annotations

import json
import re

from sandbox.hashing import stable_int
from sandbox.llm import LLMRequest, ScriptedBackend
from tasks.pingpong.scripted import dialogue_answers

from .judge import CRITERIA, JUDGE_TAG

REFUSAL_MARKERS = ("I cannot continue", "I won't play", "as an AI")


def _hash(text: str) -> int:
    return stable_int(text)


def judge(strict: bool = False):
    def answer(request: LLMRequest) -> str:
        schema = request.json_schema()
        n = schema["properties"]["turns"]["minItems"]
        replies = re.findall(r"^player: (.*)$", request.messages[-1].content, re.MULTILINE)
        replies += [""] * (n - len(replies))
        turns = []
        for i, reply in enumerate(replies[:n]):
            turn = {"turn": i + 1,
                    "is_refusal": any(m.lower() in reply.lower() for m in REFUSAL_MARKERS)}
            for k, criterion in enumerate(CRITERIA):
                grade = 2 + (_hash(reply) >> (4 * k)) % 4  # 2..5
                turn[f"{criterion}_explanation"] = f"'{reply[:20]}' reads as graded."
                turn[f"{criterion}_score"] = max(1, grade - 1) if strict else grade
            turns.append(turn)
        return json.dumps({"turns": turns})
    return answer


def backend(name: str, *, verbose: bool = False, strict: bool = False) -> ScriptedBackend:
    return ScriptedBackend({**dialogue_answers(verbose), JUDGE_TAG: judge(strict)},
                           model_id=f"scripted/{name}")


def pingpong() -> ScriptedBackend:
    return backend("pingpong")


def pingpong_verbose() -> ScriptedBackend:
    return backend("pingpong-verbose", verbose=True)


def pingpong_strict() -> ScriptedBackend:
    return backend("pingpong-strict", strict=True)
