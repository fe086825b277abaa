"""The export's columns and their types, once: the writers type Parquet and CSV by them, and
evaluation/README.md ("Exporting results") lists them (a test holds the two together).

Types: `string`, `integer`, `float`, `boolean`, and `json`: an object or list, written as
itself in .jsonl and as JSON text in .csv and .parquet (DuckDB: `json_extract`; pandas:
`json.loads`). An absent value is null (an empty cell in CSV).
"""

from __future__ import annotations

# One row per scored unit (an STSS episode, a language-level scenario, a PingPong
# conversation, a SimulBench script, a RefuteBench dialogue, an interview answer).
UNIT_COLUMNS: dict[str, str] = {
    "benchmark": "string",
    "run_set": "string",
    "run_set_dir": "string",
    "item": "string",
    "type": "string",
    "template": "string",
    "seed": "integer",
    "model": "string",
    "background_model": "string",
    "architecture": "string",
    "roles": "json",
    "endpoints": "json",
    "measure": "string",
    "value": "float",
    "value_reference": "float",
    "measures": "json",
    "judges": "json",
    "status": "string",
    "reason": "string",
    "calls": "integer",
    "tokens_in": "integer",
    "tokens_out": "integer",
    "usage": "json",
    "money": "float",
    "wall_s": "float",
    "code_version": "string",
    "run_dir": "string",
}

# One row per LLM call (`--calls`), from each unit's calls.jsonl.
CALL_COLUMNS: dict[str, str] = {
    "benchmark": "string",
    "run_set": "string",
    "run_set_dir": "string",
    "item": "string",
    "run_dir": "string",
    "seq": "integer",
    "t": "float",
    "role": "string",
    "model": "string",
    "endpoint": "string",
    "purpose": "string",
    "agent": "string",
    "tokens_in": "integer",
    "tokens_out": "integer",
    "latency_s": "float",
    "cached": "boolean",
    "attempts": "integer",
    "retries": "integer",
    "faults": "json",
    "money": "float",
}

STATUSES = ("scored", "unscored", "damaged", "unavailable")
