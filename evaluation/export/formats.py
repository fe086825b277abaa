"""Writing export rows: the format follows the file's suffix. `.csv` and `.jsonl` with the
standard library; `.parquet` with pyarrow (the `data` extra). A `json` column (columns.py) is
itself in .jsonl and JSON text in .csv and .parquet.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from sandbox.storage import write_atomic

FORMATS = (".csv", ".jsonl", ".parquet")
DATA_EXTRA = "pip install '.[data]'"


class ExportError(Exception):
    """An output the export cannot write (its format, or a missing extra): one line."""


def check_format(path: Path | str) -> str:
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise ExportError(f"{path}: the format follows the file name: {', '.join(FORMATS)}")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ExportError(f"{path}: Parquet needs pyarrow: {DATA_EXTRA}") from None
    return suffix


def _text(value: Any) -> Any:
    return json.dumps(value, sort_keys=True, ensure_ascii=False) if value is not None else None


def write_rows(rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str],
               path: Path | str) -> int:
    """Write `rows` (their `columns`, in order) to `path` in the format of its suffix; the
    bytes written."""
    path = Path(path)
    suffix = check_format(path)
    names = list(columns)
    if suffix == ".jsonl":
        data = "".join(json.dumps({k: row.get(k) for k in names}, ensure_ascii=False,
                                  allow_nan=False) + "\n" for row in rows).encode()
    elif suffix == ".csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(names)
        for row in rows:
            writer.writerow(["" if (v := row.get(k)) is None else
                             _text(v) if columns[k] == "json" else
                             ("true" if v else "false") if columns[k] == "boolean" else v
                             for k in names])
        data = out.getvalue().encode()
    else:
        data = _parquet(rows, columns)
    write_atomic(path, data)
    return len(data)


def _parquet(rows: Sequence[Mapping[str, Any]], columns: Mapping[str, str]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {"string": pa.string(), "integer": pa.int64(), "float": pa.float64(),
             "boolean": pa.bool_(), "json": pa.string()}
    arrays = {k: pa.array([_text(r.get(k)) if t == "json" else r.get(k) for r in rows],
                          type=types[t]) for k, t in columns.items()}
    out = io.BytesIO()
    pq.write_table(pa.table(arrays), out)
    return out.getvalue()
