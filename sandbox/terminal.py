"""The console every command prints through (credentials masked: sandbox/redact.py)."""
from __future__ import annotations

import os
import sys

from rich.console import Console

from .redact import RedactingStream

PIPED_WIDTH = 120


def console() -> Console:
    """A rich console for command output.

    Piped into a file (a long run's log), rich assumes 80 columns and cuts names in tables
    ('Okonk…'); there it gets 120 columns unless $COLUMNS says otherwise. A terminal keeps
    its own width."""
    out = RedactingStream(sys.stdout)
    if sys.stdout.isatty() or os.environ.get("COLUMNS"):
        return Console(file=out)
    return Console(file=out, width=PIPED_WIDTH)
