"""Errors a user can fix. The CLI prints their message on one line and exits with code 2."""

from __future__ import annotations


class UserError(Exception):
    """Bad input: a file, an option, a model string, an endpoint. Raised before work starts."""
