"""The world file: a YAML document with an ASCII tile grid and a legend.

    name: town                      # the first part of every address in this world
    title: Larkhaven
    tile_meters: 4.0                # walking time = tile_meters / walking speed per tile
    legend:
      "#": {blocked: wall}          # a tile nobody can walk on
      "|": {blocked: wall, sector: Copper Kettle Cafe, arena: dining room}  # a wall seen as
                                    # part of that arena (perception), never walked
      "c": {sector: Copper Kettle Cafe, arena: dining room}   # floor of one arena
      "=": {object: bed}            # an object; its arena is the floor around it
      ".": {sector: streets, arena: Main Street, color: "#d8d2c4"}  # colour: optional
    grid: |
      #######
      #ccc=c#
      #######
    spawns: {Maya Lindqvist: "town:Willow Court:apartment 1:bed", sp-B: [4, 1]}  # place or tile
    object_states: {bed: made, "town:Copper Kettle Cafe:dining room:piano": closed}
    residents: ../residents/town    # optional: a directory of resident files
    start_date: 2023-02-13          # optional: the day a day in this town starts by default
    allow_unreachable: false        # optional: load even with places no walk reaches (imports)

This module only parses and checks the shape of the file (`load_world_file`); `World` checks
what the grid means (connected arenas, reachable places). Duplicate keys are errors here, not
silently overwritten as plain YAML would.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sandbox.files import FileFormatError, read_with_lines, validation_error

from .address import SEP


def _no_colon(value: str | None) -> str | None:
    if value is not None and SEP in value:
        raise ValueError(f"{value!r}: names in addresses cannot hold {SEP!r}")
    return value.strip() if value is not None else None


class LegendEntry(BaseModel):
    """What one grid symbol means: a blocked tile (optionally seen as part of an arena: the
    reference town's walls belong to their rooms), an arena's floor, or an object."""

    model_config = ConfigDict(extra="forbid")

    blocked: str | None = None  # a terrain name for walls, water, trees (drawn, not walked)
    sector: str | None = None
    arena: str | None = None
    object: str | None = None  # with no sector/arena: the arena of the floor around it
    color: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")  # for renderers

    @property
    def rgb(self) -> tuple[int, int, int] | None:
        """`color` as (red, green, blue), or None when the entry gives none."""
        if self.color is None:
            return None
        return (int(self.color[1:3], 16), int(self.color[3:5], 16), int(self.color[5:7], 16))

    @field_validator("sector", "arena", "object")
    @classmethod
    def _names(cls, value: str | None) -> str | None:
        return _no_colon(value)

    @model_validator(mode="after")
    def _one_meaning(self) -> LegendEntry:
        if self.blocked is not None:
            if self.object:
                raise ValueError("a blocked symbol has no object (nobody stands at it)")
            if bool(self.sector) != bool(self.arena):
                raise ValueError("a blocked symbol seen as part of an arena gives both sector "
                                 "and arena (or neither)")
        elif bool(self.sector) != bool(self.arena):
            raise ValueError("give both sector and arena (or neither, for a plain object)")
        elif not (self.arena or self.object):
            raise ValueError("give blocked, sector+arena, or object")
        return self


class WorldFile(BaseModel):
    """A world as written in its YAML file."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    title: str = ""
    description: str = ""
    # a length: a finite number above 0 (not `true`, which YAML would make 1)
    tile_meters: float = Field(default=1.0, gt=0, allow_inf_nan=False, strict=True)
    legend: dict[str, LegendEntry] = Field(min_length=1)
    grid: str = Field(min_length=1)
    spawns: dict[str, str | tuple[int, int]] = Field(default_factory=dict)  # a place or a tile
    object_states: dict[str, str] = Field(default_factory=dict)
    residents: str | None = None
    # The town's own calendar: the imported reference town starts on the day its storage base
    # says (reverie/meta.json), which its residents' `currently` lines speak of.
    start_date: date | None = None
    # Imported maps (the reference town) may have places nobody can walk to; they load, are
    # listed by `sandbox world`, and a walk there fails. Our own maps must be fully connected.
    allow_unreachable: bool = False

    @field_validator("name")
    @classmethod
    def _world_name(cls, v: str) -> str:
        return _no_colon(v)

    @field_validator("legend")
    @classmethod
    def _single_characters(cls, legend: dict[str, LegendEntry]) -> dict[str, LegendEntry]:
        for symbol in legend:
            if len(symbol) != 1 or symbol.isspace():
                raise ValueError(f"legend symbol {symbol!r} must be one visible character")
        return legend

    def rows(self) -> list[str]:
        """The grid lines, without the blank lines YAML may leave around a block."""
        lines = self.grid.split("\n")
        while lines and not lines[-1].strip():
            lines.pop()
        while lines and not lines[0].strip():
            lines.pop(0)
        return lines


def load_world_file(path: Path | str) -> tuple[WorldFile, int]:
    """Read and validate a world file. Returns the model and the file line of grid row 1."""
    path = Path(path)
    data, lines = read_with_lines(path)
    if not isinstance(data, dict):
        raise FileFormatError(path, "a world file is a YAML mapping (name, legend, grid, ...)")
    try:
        world_file = WorldFile.model_validate(data)
    except ValidationError as exc:
        raise validation_error(path, exc) from exc
    first_row_line = lines.get("grid", 0)
    # Skip the blank lines rows() drops at the top of the block.
    for line in world_file.grid.split("\n"):
        if line.strip():
            break
        first_row_line += 1
    return world_file, first_row_line
