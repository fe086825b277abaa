"""What a call cost: the prices of the models file its run was made with, else of the one
given to the export (`--models`, $SANDBOX_MODELS or the user's file).

    prices = Prices(load_models_file(args.models))
    price_of(record, prices.of_run(run_dir))   # dollars, or None when no file prices it

A run's header records, for each endpoint it reached over HTTP, the models file its alias was
resolved in (`config.endpoints[*].models_file`, sandbox/runner.py): its prices are the ones the
run was made at. A recorded file that is gone is passed over for the given one; one that no
longer reads is too, and said once (`Prices.problems`): never a silent zero.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.files import FileFormatError, json_line, read_text
from sandbox.llm import CallRecord, load_models_file
from sandbox.llm.endpoints import Endpoint, ModelsFile


class PriceList:
    """The models files a run's calls are priced from, the run's own first."""

    def __init__(self, files: list[ModelsFile]):
        self.files = files

    def get(self, alias: str) -> Endpoint | None:
        """The first entry of `alias` that has both prices (else the first of it, if any)."""
        found = [f.get(alias) for f in self.files if f.get(alias) is not None]
        return next((e for e in found if e.prices is not None), found[0] if found else None)


class Prices:
    """The given models file, and the files runs recorded, each read once."""

    def __init__(self, given: ModelsFile | None = None):
        self.given = given
        self._read: dict[str, ModelsFile | None] = {}
        self.problems: list[str] = []

    def of_run(self, run_dir: Path | None) -> PriceList:
        """The prices of one run's calls: its recorded models files', then the given one's."""
        files = [f for path in recorded_models_files(run_dir) if (f := self._file(path))]
        return PriceList(files + ([self.given] if self.given is not None else []))

    def _file(self, path: str) -> ModelsFile | None:
        if path not in self._read:
            found = None
            if Path(path).is_file():
                try:
                    found = load_models_file(path)
                except (FileFormatError, OSError, ValueError) as exc:
                    self.problems.append(f"{path}: the models file runs recorded does not "
                                         f"read, its prices not used: {exc}")
            self._read[path] = found
        return self._read[path]


def recorded_models_files(run_dir: Path | None) -> list[str]:
    """The models files a run's header says its endpoints' aliases were resolved in."""
    if run_dir is None:
        return []
    try:
        header = json_line(read_text(Path(run_dir) / "header.json"))
    except (OSError, ValueError, FileFormatError):
        return []
    endpoints: Any = ((header.get("config") or {}).get("endpoints") or {}) \
        if isinstance(header, dict) else {}
    if not isinstance(endpoints, dict):
        return []
    return list(dict.fromkeys(e["models_file"] for e in endpoints.values()
                              if isinstance(e, dict) and isinstance(e.get("models_file"), str)))


def price_of(record: CallRecord, prices: PriceList | None) -> float | None:
    """The call's dollars when a models file prices its alias (or its model named as an
    alias), else None."""
    return tokens_price(record.endpoint or record.model, record.prompt_tokens,
                        record.completion_tokens, prices)


def tokens_price(alias: str, tokens_in: int, tokens_out: int,
                 prices: PriceList | None) -> float | None:
    if prices is None:
        return None
    endpoint = prices.get(alias)
    if endpoint is None or endpoint.prices is None:
        return None
    price_in, price_out = endpoint.prices
    return (tokens_in * price_in + tokens_out * price_out) / 1e6
