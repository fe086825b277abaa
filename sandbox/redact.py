"""Credentials kept out of everything shown or written: messages, errors, logs, lock files.

A base URL may carry a credential (`http://user:KEY@host/v1`, `https://host/v1?api-key=KEY`,
`?key=`, `?token=`). `redact_url` writes such a URL with its credentials as `***`, and
remembers each credential it removed; `redact` does the same for every URL inside a text and
then replaces every remembered secret (the API key from the environment, a credential seen in a
URL) wherever else it appears, e.g. echoed back by a proxy in an error body.

    redact_url("http://me:sk-1@host/v1?api-key=sk-2&x=1")  ->  "http://***@host/v1?api-key=***&x=1"

The command line registers what it is given (`--base-url`, OPENAI_BASE_URL, OPENAI_API_KEY)
before anything runs (`remember_environment`); the openai backend redacts every message it
raises; the CLI redacts its error line, the console and every log record.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
# Query parameters that carry a credential, by the words in their name (api-key, api_key,
# apikey, key, access_token, token, password, secret, signature, sig, auth, code...).
_SECRET_PARAM = re.compile(r"key|token|secret|passw|pwd|sig|auth|credential|session",
                           re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")

_secrets: set[str] = set()
_lock = threading.Lock()


MIN_REMEMBERED = 8  # shorter values would mask ordinary words wherever they appear


def remember(secret: str | None) -> None:
    """Redact `secret` wherever `redact` meets it from now on (values shorter than
    MIN_REMEMBERED characters are masked inside URLs only)."""
    if secret and len(secret) >= MIN_REMEMBERED:
        with _lock:
            _secrets.add(secret)


def redact_url(url: str) -> str:
    """`url` with its user information and credential query values masked."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:  # not a URL after all (an unbalanced [ in the host)
        return url
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        # user:KEY -> the key; a lone KEY@ is the key itself (a user name alone is no secret,
        # but is masked in the URL all the same)
        remember(userinfo.partition(":")[2] or userinfo)
        netloc = f"{MASK}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        masked = []
        for name, value in pairs:
            if _SECRET_PARAM.search(name) and value:
                remember(value)
                value = MASK
            masked.append((name, value))
        query = urlencode(masked, safe="*")
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact(text: str) -> str:
    """`text` with every URL's credentials and every remembered secret masked."""
    if not text:
        return text
    text = _URL.sub(lambda m: redact_url(m.group(0)), text)
    with _lock:
        secrets = sorted(_secrets, key=len, reverse=True)  # a longer secret holding a shorter
    for secret in secrets:
        if secret in text:
            text = text.replace(secret, MASK)
    return text


def redact_command(words) -> list[str]:
    """A command line as it is recorded anywhere (a run's header, a benchmark item's, a sweep's
    record, a report's page, a fork's chain): each word with its credentials masked. The one
    redaction of every recorded command, so a `--base-url http://user:KEY@host/v1` given to any
    command is kept nowhere in clear."""
    return [redact(word) for word in words]


def remember_environment(base_url: str | None = None) -> None:
    """Remember the credentials a command may be given: the API key in the environment and
    those inside `base_url` or OPENAI_BASE_URL."""
    remember(os.environ.get("OPENAI_API_KEY"))
    for url in (base_url, os.environ.get("OPENAI_BASE_URL")):
        if url:
            redact_url(url)


class RedactingRecords:
    """A log record factory that redacts each record's message and its arguments' text (the
    HTTP client logs each request's URL). Installed once by the command line."""

    def __init__(self, factory):
        self.factory = factory

    def __call__(self, *args, **kwargs) -> logging.LogRecord:
        record = self.factory(*args, **kwargs)
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a record whose arguments do not fit its format
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact(message), ()
        return record


def redact_logs() -> None:
    """Redact every log record of this process from now on (idempotent)."""
    factory = logging.getLogRecordFactory()
    if not isinstance(factory, RedactingRecords):
        logging.setLogRecordFactory(RedactingRecords(factory))


class RedactingStream:
    """A text stream that redacts what is written to it (the console prints through one)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(redact(text))
        return len(text)

    def __getattr__(self, name):  # isatty, flush, fileno, encoding: the stream's own
        return getattr(self._stream, name)
