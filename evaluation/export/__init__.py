"""Results as data: every scored unit of run sets as one tidy table (CSV, JSON lines, Parquet),
every LLM call as one, or one Inspect eval log per run set (`sandbox export`).

    export = read_units(["runs/suite"], prices)       # rows: UNIT_COLUMNS; skipped: named
    write_rows(export.rows, UNIT_COLUMNS, "results.csv")
    rows, uncounted = call_rows(export)               # CALL_COLUMNS, priced as the units
    write_inspect_logs(export, "logs")                # the `inspect` extra

Modules: `columns.py` (the columns and their types), `units.py` (a unit per row, read with the
boards' own readers), `calls.py` (a call per row), `formats.py` (writers by suffix),
`inspect_logs.py` (Inspect eval logs through inspect_ai's log API), `prices.py` (a call's
price: the models file its run was made with, else the one given).
"""

from .calls import call_rows
from .columns import CALL_COLUMNS, STATUSES, UNIT_COLUMNS
from .formats import DATA_EXTRA, FORMATS, ExportError, check_format, write_rows
from .inspect_logs import INSPECT_EXTRA, check_inspect, write_inspect_logs
from .units import Export, find_run_sets, read_units

__all__ = ["CALL_COLUMNS", "DATA_EXTRA", "FORMATS", "INSPECT_EXTRA", "STATUSES", "UNIT_COLUMNS",
           "Export", "ExportError", "call_rows", "check_format", "check_inspect",
           "find_run_sets", "read_units", "write_inspect_logs", "write_rows"]
