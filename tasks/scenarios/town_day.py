"""`sandbox run town_day`: generative agents living a day in a town, from a TownConfig file."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from agents.architecture import load_architecture
from agents.scenario import TownConfig, TownScenario
from sandbox.files import FileFormatError, load_model, validation_error

DEFAULT_CONFIG = Path(__file__).with_name("town_day.yaml")


def town_day(path: Path | str | None = None, max_turns: int | None = None) -> TownScenario:
    """Read and check a town-day file before anything runs: residents and architectures must
    exist, so a typo is a one-line error rather than a crash minutes into the episode."""
    path = path or DEFAULT_CONFIG
    if max_turns is not None:
        raise FileFormatError(path, "--turns is for single_room; a town conversation's length "
                                    "is the architecture's conversation.max_turns")
    config = load_model(path, TownConfig)
    scenario = TownScenario(config)
    try:
        names = scenario._names()
    except KeyError as exc:
        raise FileFormatError(path, exc.args[0], "residents") from exc
    for name in [*config.architectures, *config.tasks]:
        if name not in names:
            raise FileFormatError(path, f"{name!r} is not among the residents "
                                        f"({', '.join(names)})", "architectures/tasks")
    for arch in sorted({config.architecture, *config.architectures.values()}):
        try:
            load_architecture(arch)
        except FileFormatError as exc:
            if exc.path.is_file():  # a bad architecture file names itself
                raise
            raise FileFormatError(path, str(exc), "architectures") from exc
        try:
            scenario.architecture(arch)
        except KeyError as exc:
            raise FileFormatError(path, exc.args[0], "params") from exc
        except ValidationError as exc:
            raise FileFormatError(path, f"for {arch}: {validation_error(path, exc).reason}",
                                  "params") from exc
    return scenario
