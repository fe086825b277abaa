"""Who a generative agent is: the persona fields of Park et al. plus what a town adds.

`Persona.from_resident` takes a `worlds.Resident` (the authored town files); tests and scenarios
can also build one directly. STSS puts a social task into `currently` (of the performer only).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


def check_person_name(name: str) -> str:
    """`name` if it can name a person: the key of every event, conversation and memory of
    theirs. ValueError when blank (a speaker no line could name). Any other text is data
    (issue 19): escaped where it is printed, made safe where it names a file."""
    if not name.strip():
        raise ValueError("a name cannot be blank")
    return name


class Persona(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    age: int = Field(default=30, ge=0, le=120)
    innate: str = ""  # traits
    learned: str = ""  # background
    currently: str = ""  # what occupies them these days; social tasks are injected here
    lifestyle: str = ""
    living_area: str  # address of their home (arena level)
    occupation: str = ""
    workplace: str | None = None
    wakes_at: str = "07:00"
    sleeps_at: str = "22:00"
    daily_requirements: list[str] = Field(default_factory=list)
    knows: dict[str, str] = Field(default_factory=dict)
    spatial_memory: list[str] = Field(default_factory=list)  # arenas known; empty: all public

    _name = field_validator("name")(check_person_name)

    @classmethod
    def from_resident(cls, resident: Any) -> Persona:
        """From a `worlds.Resident` (or anything with the same fields)."""
        fields = {k: getattr(resident, k) for k in cls.model_fields if hasattr(resident, k)}
        return cls(**fields)

    @property
    def first_name(self) -> str:
        return self.name.split()[0]

    def identity(self) -> str:
        """The paragraph every prompt starts from (the reference's 'identity stable set')."""
        lines = [f"Name: {self.name} (age {self.age})"]
        if self.occupation:
            lines.append(f"Occupation: {self.occupation}")
        for label, value in (("Traits", self.innate), ("Background", self.learned),
                             ("Currently", self.currently), ("Lifestyle", self.lifestyle)):
            if value:
                lines.append(f"{label}: {value}")
        lines.append(f"Home: {self.living_area}")
        if self.knows:
            lines.append("Knows: " + "; ".join(f"{who} ({how})" for who, how in
                                                self.knows.items()))
        return "\n".join(lines)
