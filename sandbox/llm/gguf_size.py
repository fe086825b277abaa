"""How long a GGUF file must be, from its own header: a converted weights file cut short (a
full disk, a copy interrupted) is found before llama.cpp refuses it in every run.

    expected_size(path)  ->  bytes the header's tensors end at, or None when it cannot tell

GGUF (llama.cpp's format, version 2 and 3): magic, version, tensor count, key-value count, the
key-values, each tensor's name, shape, type and offset, then the tensor data from the next
multiple of `general.alignment` (32 by default). Only the types the embedded model's files hold
are sized (a type not listed: None, no verdict).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

# ggml type -> (elements a block, bytes a block): ggml.c's type traits.
BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24),
          8: (32, 34), 9: (32, 36), 30: (1, 2)}
# key-value type -> bytes of a scalar (8 string and 9 array read apart)
SCALARS = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
HEADER_LIMIT = 64 * 2**20  # the header of a 135M model's file is a few MB (its vocabulary)


class _Cut(Exception):
    """The file ended inside its header."""


def _read(source: BinaryIO, size: int) -> bytes:
    data = source.read(size)
    if len(data) != size:
        raise _Cut
    return data


def _u32(source: BinaryIO) -> int:
    return struct.unpack("<I", _read(source, 4))[0]


def _u64(source: BinaryIO) -> int:
    return struct.unpack("<Q", _read(source, 8))[0]


def _string(source: BinaryIO) -> bytes:
    size = _u64(source)
    if size > HEADER_LIMIT:
        raise ValueError("a string longer than a header")
    return _read(source, size)


def _value(source: BinaryIO, kind: int):
    if kind == 8:
        return _string(source)
    if kind == 9:
        inner, count = _u32(source), _u64(source)
        if count > HEADER_LIMIT:
            raise ValueError("an array longer than a header")
        for _ in range(count):
            _value(source, inner)
        return None
    if kind not in SCALARS:
        raise ValueError(f"value type {kind}")
    data = _read(source, SCALARS[kind])
    return int.from_bytes(data, "little") if kind in (4, 10) else None


def expected_size(path: Path | str) -> int | None:
    """The size the file's header says it has (where its last tensor ends); one byte more than
    it holds when it ends inside its own header; None when the header cannot be sized (not
    GGUF, a version or a tensor type not known here)."""
    with open(path, "rb") as source:
        try:
            if _read(source, 4) != b"GGUF" or _u32(source) not in (2, 3):
                return None
            tensors, values = _u64(source), _u64(source)
            if tensors > HEADER_LIMIT or values > HEADER_LIMIT:
                return None
            alignment = 32
            for _ in range(values):
                key, kind = _string(source), _u32(source)
                value = _value(source, kind)
                if key == b"general.alignment" and value:
                    alignment = value
            end = 0
            for _ in range(tensors):
                _string(source)
                dims = [_u64(source) for _ in range(_u32(source))]
                kind, offset = _u32(source), _u64(source)
                if kind not in BLOCKS:
                    return None
                elements = 1
                for dim in dims:
                    elements *= dim
                per_block, block_bytes = BLOCKS[kind]
                end = max(end, offset + elements // per_block * block_bytes)
            start = -(-source.tell() // alignment) * alignment
        except _Cut:  # it needs more than it holds, how much more unknown
            return source.tell() + 1
        except ValueError:
            return None
    return start + end


def cut_short(path: Path | str) -> bool:
    """Whether `path` ends before its header says its tensors end."""
    expected = expected_size(path)
    return expected is not None and Path(path).stat().st_size < expected
