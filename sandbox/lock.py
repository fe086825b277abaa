"""One writer per directory: every command that writes into an --out or a run directory holds
its lock while it writes.

    with hold(out):          # DirectoryBusy (a UserError: one line, exit 2) if another holds it
        ...                  # write into out

The lock is `DIR/.sandbox.lock`, an `flock`ed file that names its holder (pid, host, command,
since). A second writer is refused at once with the holder's pid and command. The kernel drops
an flock when its process dies, so a lock left by a killed process is not held: the next writer
takes it over and says so (one logged line naming the dead holder). Where the filesystem has no
flock (ENOLCK on some network mounts), the holder's pid decides: alive on this host (or on
another host, where it cannot be asked) refuses, gone takes over.

Taking a directory's lock also cleans up after a killed writer: the temporary files of an
interrupted `storage.write_atomic` (`.NAME.XXXXXXXX.tmp`) and lock files nobody holds, in the
directory and below it, except under a directory another writer holds now; how many is logged
in one line.

A process may take a lock it already holds (re-entrant: a command holds its --out, its episodes
their run directories), and `held_over(path)` says whether a lock of this process covers a file:
the torn-line repair of an append-only file runs only then (sandbox/storage.py). A command also
checks the directories above its output (`check_above`): writing into a run directory of a
suite another command is running is refused too. An output file is locked the same way beside it
(`.NAME.sandbox.lock`, `hold(path, file=True)`).

`hold_output(path)` holds a lock until the command ends (`session()`, opened by the CLI): one
line at the top of a command instead of a block around it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import json
import logging
import os
import re
import socket
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from .errors import UserError
from .redact import redact

LOCK_FILE = ".sandbox.lock"
# storage.atomic_path's temporary names: "." + the file's name + "." + 8 random characters
TEMPORARY = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")
FILE_LOCK = re.compile(r"^\..+\.sandbox\.lock$")
_NO_FLOCK = (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL)

log = logging.getLogger(__name__)
log.setLevel(logging.INFO)  # a takeover or a clean-up changes a user's directory: always said


class DirectoryBusy(UserError):
    """Another process is writing into the directory (or the file)."""


def _cannot_write(path: Path, exc: OSError) -> UserError:
    """One line for an output that cannot be made or written (a file in the way of a
    directory, no permission, a read-only filesystem)."""
    if isinstance(exc, (FileExistsError, NotADirectoryError)):
        return UserError(f"{path}: cannot make this directory: a file is in the way "
                         f"({exc.filename})")
    return UserError(f"{path}: cannot write there: {exc.strerror or exc}")


@dataclass
class _Held:
    lock_file: Path
    target: Path  # the directory, or the file a file lock guards
    is_file: bool
    fd: int
    count: int = 1
    created: list[Path] = field(default_factory=list)  # directories made for it, deepest first


_held: dict[Path, _Held] = {}
_registry = threading.RLock()


def command_line() -> str:
    """How this process was started, for the holder's record (credentials masked)."""
    name = Path(sys.argv[0]).name if sys.argv and sys.argv[0] else "python"
    if name == "cli.py":  # python -m sandbox.app.cli
        name = "sandbox"
    elif name == "-c":
        name = "python -c ..."
    return redact(" ".join([name, *sys.argv[1:]]))[:300]


def lock_file_of(path: Path, is_file: bool) -> Path:
    return path.parent / f".{path.name}.sandbox.lock" if is_file else path / LOCK_FILE


def _holder(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    raw = os.read(fd, 4096).decode("utf-8", errors="replace")
    try:
        holder = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {"command": "unknown (the lock file does not read)"}
    return holder if isinstance(holder, dict) else {}


def _describe(holder: dict) -> str:
    host = holder.get("host")
    where = f" on {host}" if host and host != socket.gethostname() else ""
    return (f"pid {holder.get('pid', '?')}{where} ({holder.get('command', 'unknown command')}"
            f", since {holder.get('since', '?')})")


def _alive(holder: dict) -> bool:
    """Whether the recorded holder may still run (another host's process cannot be asked)."""
    if holder.get("host") not in (None, socket.gethostname()):
        return True
    try:
        os.kill(int(holder.get("pid", 0)), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    except (TypeError, ValueError, OverflowError):
        return False
    return int(holder.get("pid", 0)) > 0


def _try_flock(fd: int, flags: int) -> bool | None:
    """True when locked, False when another holds it, None when the filesystem has no flock."""
    try:
        fcntl.flock(fd, flags | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in _NO_FLOCK:
            return None
        raise
    return True


def _same_file(fd: int, path: Path) -> bool:
    """Whether `fd` is still the file at `path` (a releasing holder unlinks it)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    own = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (own.st_dev, own.st_ino)


def _busy_error(target: Path, is_file: bool, holder: dict) -> DirectoryBusy:
    what = "file" if is_file else "directory"
    return DirectoryBusy(f"{target}: another command is writing this {what}: "
                         f"{_describe(holder)}; wait for it to end, or use another output")


def _acquire(lock_file: Path, target: Path, is_file: bool) -> int:
    """The lock file's descriptor, locked by this process; DirectoryBusy when another holds it."""
    while True:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            got = _try_flock(fd, fcntl.LOCK_EX)
        except OSError:
            os.close(fd)
            raise
        if got is False:
            holder = _holder(fd)
            os.close(fd)
            raise _busy_error(target, is_file, holder)
        if not _same_file(fd, lock_file):  # its holder released (and removed) it meanwhile
            os.close(fd)
            continue
        holder = _holder(fd)
        if got is None and holder and _alive(holder) and holder.get("pid") != os.getpid():
            os.close(fd)
            raise _busy_error(target, is_file, holder)
        if holder.get("pid") not in (None, os.getpid()):
            log.warning("%s: took over the lock of %s, which is no longer running", target,
                        _describe(holder))
        me = {"pid": os.getpid(), "host": socket.gethostname(), "command": command_line(),
              "since": datetime.now().isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, (json.dumps(me) + "\n").encode("utf-8"))
        return fd


def _held_by_another(lock_file: Path) -> dict | None:
    """The holder of a lock file another writer holds now, else None (this process's own
    locks count as held: their writers are running)."""
    if lock_file.resolve() in _held:
        return {"pid": os.getpid()}
    try:
        fd = os.open(lock_file, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        got = _try_flock(fd, fcntl.LOCK_SH)
        holder = _holder(fd)
        if got is True:
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        if got is None and not (holder and _alive(holder)):
            return None
        return holder or {"pid": "?"}
    finally:
        os.close(fd)


def _check_above(target: Path) -> None:
    """DirectoryBusy when a directory above `target` is being written by another process."""
    for parent in target.parents:
        lock_file = parent / LOCK_FILE
        if lock_file.is_file() and lock_file.resolve() not in _held:
            holder = _held_by_another(lock_file)
            if holder is not None:
                raise DirectoryBusy(f"{target}: it is inside {parent}, which another command is "
                                    f"writing: {_describe(holder)}; wait for it to end, or use "
                                    "another output")


def clean(directory: Path) -> tuple[int, int]:
    """Remove what killed writers left in `directory` and below it: temporary files of
    interrupted atomic writes, and lock files nobody holds (not the directory's own). A
    directory another writer holds now is skipped with everything in it. (temporaries, locks)"""
    temporaries = locks = 0
    own = directory / LOCK_FILE
    for root, dirs, files in os.walk(directory):
        here = Path(root)
        kept = []
        for name in dirs:
            lock_file = here / name / LOCK_FILE
            if lock_file.is_file() and _held_by_another(lock_file) is not None:
                continue  # a live writer's: its temporaries may be in use
            kept.append(name)
        dirs[:] = kept
        for name in files:
            path = here / name
            if TEMPORARY.match(name):
                path.unlink(missing_ok=True)
                temporaries += 1
            elif (name == LOCK_FILE or FILE_LOCK.match(name)) and path != own \
                    and _held_by_another(path) is None:
                path.unlink(missing_ok=True)
                locks += 1
    return temporaries, locks


def _clean_file(path: Path) -> int:
    """Temporary files of interrupted atomic writes of one file."""
    removed = 0
    prefix = f".{path.name[:80]}."
    for candidate in path.parent.glob(f".{glob.escape(path.name[:80])}.*.tmp"):
        if candidate.name.startswith(prefix) and TEMPORARY.match(candidate.name):
            candidate.unlink(missing_ok=True)
            removed += 1
    return removed


def _make_dirs(directory: Path) -> list[Path]:
    """mkdir -p; the directories it made, deepest first."""
    made = []
    for path in [directory, *directory.parents]:
        if path.exists():
            break
        made.append(path)
    directory.mkdir(parents=True, exist_ok=True)
    return made


@contextlib.contextmanager
def hold(path: Path | str, *, file: bool = False, check_above: bool = True) -> Iterator[Path]:
    """Hold the lock of directory `path` (made if missing), or of the output file `path` with
    `file=True`, while the block runs. DirectoryBusy when another process holds it, or (with
    `check_above`) a directory above it. Directories made only for the lock are removed again
    if nothing was written into them."""
    path = Path(path)
    with _registry:
        try:
            made = _make_dirs(path.parent if file else path)
        except OSError as exc:
            raise _cannot_write(path, exc) from exc
        target = path.parent.resolve() / path.name if file else path.resolve()
        lock_file = lock_file_of(target, file)
        entry = _held.get(lock_file)
        if entry is not None:
            entry.count += 1
        else:
            try:
                if check_above:
                    _check_above(target)
                try:
                    fd = _acquire(lock_file, target, file)
                except OSError as exc:
                    raise _cannot_write(path, exc) from exc
            except BaseException:
                _remove_empty(made)
                raise
            entry = _held[lock_file] = _Held(lock_file, target, file, fd, created=made)
            if file:
                removed, locks = _clean_file(target), 0
            else:
                removed, locks = clean(target)
            if removed or locks:
                stale = f" and {locks} lock file(s) nobody held" if locks else ""
                log.warning("%s: removed %d temporary file(s) of interrupted writes%s", target,
                            removed, stale)
    try:
        yield target
    finally:
        with _registry:
            entry.count -= 1
            if entry.count == 0:
                del _held[lock_file]
                lock_file.unlink(missing_ok=True)  # while still locked: no one half-takes it
                os.close(entry.fd)
                _remove_empty(entry.created)


def _remove_empty(made: list[Path]) -> None:
    """Remove the directories a lock made, deepest first, as long as they are empty."""
    for directory in made:
        try:
            directory.rmdir()
        except OSError:  # something was written into it (or it is gone): kept
            return


def held_over(path: Path | str) -> bool:
    """Whether a lock this process holds covers `path` (its directory or one above, or the
    file itself)."""
    path = Path(path)
    resolved = path.parent.resolve() / path.name
    with _registry:
        for entry in _held.values():
            if entry.is_file:
                if entry.target == resolved:
                    return True
            elif resolved.is_relative_to(entry.target):
                return True
    return False


_session: contextlib.ExitStack | None = None


@contextlib.contextmanager
def session() -> Iterator[None]:
    """Locks taken by `hold_output` inside the block are released when it ends (the CLI opens
    one around each command)."""
    global _session
    outer, _session = _session, contextlib.ExitStack()
    try:
        with _session:
            yield
    finally:
        _session = outer


def hold_output(path: Path | str, *, file: bool = False) -> Path:
    """Hold the lock of `path` until the command ends (`session`); without a session, until
    the process ends."""
    stack = _session
    if stack is None:
        stack = _process_stack()
    return stack.enter_context(hold(path, file=file))


_process_locks: contextlib.ExitStack | None = None


def _process_stack() -> contextlib.ExitStack:
    global _process_locks
    if _process_locks is None:
        import atexit

        _process_locks = contextlib.ExitStack()
        atexit.register(_process_locks.close)
    return _process_locks
