"""How files are written so that a kill (`kill -9`, a power cut) never leaves half of one.

Two kinds of file, one rule each:
- A file rewritten whole (header, result, score, judgments, suite and benchmark state, manifests,
  tables, boards): `write_atomic` writes a temporary file beside it, fsyncs it and renames it over
  the old one. A reader sees the old file or the new one, never a mix. `atomic_path` does the
  same for a file another library writes by name (the embedded model's F16 weights).
- An append-only JSON-lines file (events.jsonl, calls.jsonl, the LLM cache): `open_append`
  opens it for appending after cutting off a torn last line (one a kill stopped mid-write) and
  logging the repair, so the next line starts on a line of its own instead of being glued to
  the broken one and lost with it. The repair runs only under a lock of this process that
  covers the file (sandbox/lock.py): a line without its newline may be another writer's,
  still being written, and is cut only when no other writer can exist.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)
# A repair changes a user's file: always said, even when the CLI shows errors only.
log.setLevel(logging.WARNING)


def _umask() -> int:
    # Read once, when the process starts writing (os.umask can only be read by setting it).
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


# mkstemp makes its file 0600 whatever the umask: a renamed temporary file would leave every
# result private to its writer, where open() gives 0644 under the usual umask. The files we
# rewrite whole get the mode open() would have given them.
FILE_MODE = 0o666 & ~_umask()


@contextlib.contextmanager
def atomic_path(path: Path | str) -> Iterator[Path]:
    """A temporary path beside `path` for whoever writes the file by name (a library converting
    a model, say). When the block ends the file is fsynced and renamed over `path`; if the block
    fails or is interrupted, it is removed and `path` is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # A unique temporary name: two writers of one file (parallel jobs) never share it.
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:80]}.", suffix=".tmp")
    os.fchmod(fd, FILE_MODE)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())  # the bytes are on disk before the name points at them
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextlib.contextmanager
def naming(path: Path | str) -> Iterator[None]:
    """An OSError raised inside without a file name (a write or flush on a full disk: ENOSPC,
    or past a file size limit) names `path`: the error line says which file was not written."""
    try:
        yield
    except OSError as exc:
        if exc.filename is None:
            raise type(exc)(exc.errno, exc.strerror or str(exc), str(path)) from exc
        raise


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """Write the whole of `data` to `path`, or leave the old file as it was."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with naming(path), atomic_path(path) as tmp:
        tmp.write_bytes(payload)


def repair_torn_tail(path: Path | str) -> int:
    """Cut a last line without its newline off an append-only file; the bytes removed.

    Only the final line can be torn (every line is written whole and flushed before the next),
    so everything up to the last newline is kept."""
    path = Path(path)
    if not path.is_file():
        return 0
    with path.open("rb+") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        # Walk back to the last newline in blocks: lines are short, files may be large.
        end, keep = size, 0
        while end > 0:
            start = max(0, end - 65536)
            fh.seek(start)
            block = fh.read(end - start)
            cut = block.rfind(b"\n")
            if cut >= 0:
                keep = start + cut + 1
                break
            end = start
        fh.truncate(keep)
    removed = size - keep
    log.warning("%s: removed a torn last line (%d bytes) left by an interrupted run", path,
                removed)
    return removed


def repair_if_locked(path: Path | str) -> int:
    """`repair_torn_tail` when a lock of this process covers `path`; otherwise the file is left
    as it is (a torn tail is then said, once per file)."""
    from .lock import held_over  # the lock module writes through this one

    path = Path(path)
    if held_over(path):
        return repair_torn_tail(path)
    if _torn(path) and path not in _said_unlocked:
        _said_unlocked.add(path)
        log.warning("%s ends in a line without its newline; not cut, since no lock of this "
                    "process covers the file (another writer may be writing it)", path)
    return 0


_said_unlocked: set[Path] = set()


def _torn(path: Path) -> bool:
    if not path.is_file():
        return False
    with path.open("rb") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return False
        fh.seek(size - 1)
        return fh.read(1) != b"\n"


def open_append(path: Path | str) -> IO[str]:
    """`path` opened for appending lines, a torn last line repaired first (under a lock of
    this process: `repair_if_locked`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    repair_if_locked(path)
    return _Appending(path.open("a", encoding="utf-8"), path)  # type: ignore[return-value]


class _Appending:
    """An append-only text file whose write errors name it (`naming`): a full disk stops a
    run with the file it could not write, not a bare "No space left on device"."""

    def __init__(self, fh: IO[str], path: Path):
        self._fh, self.path = fh, path

    def __getattr__(self, name: str):
        return getattr(self._fh, name)

    def write(self, text: str) -> int:
        with naming(self.path):
            return self._fh.write(text)

    def writelines(self, lines) -> None:
        with naming(self.path):
            self._fh.writelines(lines)

    def flush(self) -> None:
        with naming(self.path):
            self._fh.flush()

    def close(self) -> None:
        with naming(self.path):
            self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()
