"""SimulBench data: simulation tasks, test scripts, their categories, and each role's sampling.

Field names follow the public SimulBench files (`simulbench_tasks.jsonl`, `simulbench_all.jsonl`),
so the published files load as they are and the scripts we extract are written in the same shape.
Our own tasks (tasks.yaml) are written with friendlier keys and mapped onto `SimTask`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from tasks.kit import Sampling

TaskType = Literal["stateful", "stateless"]
Kind = Literal["tool", "environment", "game", "role"]
Category = Literal["lastonly", "firstchan", "subseqchan"]
CATEGORIES: tuple[Category, ...] = ("lastonly", "firstchan", "subseqchan")
TURNS = 4  # user turns per collected dialogue (paper section 3.2)
DIALOGUES_PER_TASK = 3
# The three collected dialogues of a task, named as in the published script file.
SOURCE_FILES = ("gpt-3.5-turbo.json", "gpt-3.5-turbo-1.json", "gpt-3.5-turbo-2.json")
DEFAULT_REQUEST_TYPE = "your executable command or instruction"
# The system message of every simulator, user-agent and judge call in the original code.
SYSTEM_PROMPT = "You are a helpful assistant."
# The user agent's strategies (paper section 3.2), in the paper's order (user_agent.py).
STRATEGIES = ("improvement", "next_step", "new_request", "other")

# Paper section 3.2 and the published scripts: a curious user at temperature 1.2, a greedy
# simulator and judge.
USER_SAMPLING = Sampling(temperature=1.2, top_p=1.0, max_tokens=300)
SIMULATOR_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=1024)
JUDGE_SAMPLING = Sampling(temperature=0.0, top_p=1.0, max_tokens=1024)


class SimTask(BaseModel):
    """One simulation task: what the simulator is asked to be, and its first request."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)  # "000#Linux_Terminal" in the public file
    act: str = Field(min_length=1)  # the name the judge sees as the simulation
    task_description: str = Field(min_length=1)  # the first user turn, verbatim
    request_type: str = Field(min_length=1)  # what later user requests look like
    type: TaskType
    kind: Kind | None = None  # ours only: tool, environment, game or role simulation


class Message(BaseModel):
    """One message of a script's history."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant"]
    content: str


class Script(BaseModel):
    """A test script: a dialogue history that ends on the user query every model answers.

    `turn_num` 0 is a LastOnly script (7 messages); 1..4 the 1-based turn whose user query ends
    the script (a Hard script, 2 * turn_num - 1 messages). `category` is not a field of the
    public file: it is worked out over the whole set when the file is read (tasks.simulbench.
    categories.categorize) and is never written."""

    model_config = ConfigDict(extra="forbid")

    id: int | str
    source_id: str = Field(min_length=1)
    act: str = Field(min_length=1)
    task_description: str
    type: TaskType
    source_file_name: str = Field(min_length=1)
    turn_num: int = Field(ge=0)
    dialogue_history: list[Message]
    category: Category | None = Field(default=None, exclude=True)
    # how `category` was decided: "turn" (LastOnly), "published" (the published split, by id),
    # "published turn" (the published split, by turn: a renumbered subset) or "file" (worked
    # out from the scripts of the file it came in)
    categorized_by: str | None = Field(default=None, exclude=True)

    @property
    def hard(self) -> bool:
        return self.turn_num > 0

    @property
    def query(self) -> str:
        return self.dialogue_history[-1].content

    def public(self) -> dict:
        """The published file's 8 fields, in its order."""
        return self.model_dump(mode="json")


PUBLIC_SCRIPT_FIELDS = tuple(k for k in Script.model_fields
                             if k not in ("category", "categorized_by"))
PUBLIC_TASK_FIELDS = ("id", "act", "task_description", "request_type", "type")
