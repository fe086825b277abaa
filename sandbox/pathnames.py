"""The one check for a name that becomes part of a path: a world's name (its file), a sweep's
model label or benchmark (its cell folder), a template or persona id used as a folder.

    safe_component("smol-ga", "model label")     # -> "smol-ga"
    safe_component("../../x", "model label")     # ValueError: ... a single name ...

A safe component is one folder or file name and nothing more: not empty, not `.` or `..`,
no `/` or `\\`, no control or format characters (a newline or an escape would also break
every line that prints it), at most MAX_COMPONENT bytes in UTF-8 (filesystems take 255).
Anything else is data (issue 19: `-rf`, `con`, any script): it names a folder as it is.
"""

from __future__ import annotations

import unicodedata

# 255 bytes is the limit of ext4, APFS and NTFS; 200 keeps room for the suffixes we add
# (`-s12`, `.yaml`, `.reference.json`, a digest).
MAX_COMPONENT = 200


def component_problem(name: str) -> str | None:
    """Why `name` is not a safe single path component, or None."""
    if not isinstance(name, str) or not name.strip():
        return "is empty"
    if name in (".", ".."):
        return "is . or .., which name a folder that is not its own"
    if "/" in name or "\\" in name:
        return "holds / or \\, so it would be a path, not a single name"
    if any(unicodedata.category(c)[0] == "C" for c in name):
        return "holds control characters (escapes, line breaks)"
    if name != name.strip():
        return "starts or ends with a space"
    if len(name.encode("utf-8")) > MAX_COMPONENT:
        return f"is {len(name.encode('utf-8'))} bytes long, at most {MAX_COMPONENT}"
    return None


def safe_component(name: str, what: str) -> str:
    """`name`, checked as a single path component; a ValueError naming `what` otherwise."""
    problem = component_problem(name)
    if problem:
        shown = "".join(repr(c)[1:-1] if unicodedata.category(c)[0] == "C" else c
                        for c in str(name))[:MAX_COMPONENT + 20]
        raise ValueError(f"{what} {shown!r} {problem}; give a single name "
                         "(letters, digits, - _ . and spaces)")
    return name
