"""How an OpenAI-compatible endpoint takes a JSON schema (its "dialect"), found by asking it.

    json_schema   response_format={"type": "json_schema", "json_schema": {...}}  (OpenAI, vLLM)
    json_object   response_format={"type": "json_object", "schema": {...}}       (llama.cpp's
                  server, which enforces the schema as a grammar and refuses json_schema)
    text          no response_format: the schema is written at the end of the prompt and the
                  JSON is read out of the answer's text (a server that refuses both)

Servers do not say which they take, and guessing wrong fails every structured call (llama-cpp-
python's server answers json_schema with an HTTP 500). So an endpoint whose dialect the models
file does not force is asked once, before its first structured call: a one-token request in
each dialect, in the order above, until one is accepted (`PROBE_TAG` tells a loopback endpoint
it is not an episode's call). What the server said when it refused one is kept and shown.
"""

from __future__ import annotations

import json
import re

DIALECTS = ("json_schema", "json_object", "text")
PROBE_TAG = "probe.json_dialect"
PROBE_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}
PROBE_MESSAGES = [{"role": "user", "content": 'Answer with the JSON object {"ok": true}.'}]

# What a server's refusal says when the request itself is wrong (not the server's state):
# pydantic's and FastAPI's validation words (llama-cpp-python answers these with a 500), and
# OpenAI's and vLLM's.
_INVALID = re.compile(r"validation error|input should be|invalid|not supported|unsupported|"
                      r"unrecognized|not permitted|extra inputs|unknown (field|parameter)",
                      re.IGNORECASE)
# The message of one pydantic error inside a longer text (llama-cpp-python quotes the error
# list and a traceback line): the part a person needs.
_PYDANTIC_MSG = re.compile(r"""'msg': (?:"([^"]*)"|'([^']*)')""")
# How servers say a request is longer than the model takes: OpenAI, vLLM and llama-cpp-python's
# server ("This model's maximum context length is N tokens. However, you requested ..."), the
# llama.cpp server ("the request exceeds the available context size"), TGI ("`inputs` tokens
# + `max_new_tokens` must be <= N"), and the error code OpenAI's body carries.
_TOO_LONG = re.compile(r"maximum context length|context (?:length|window|size)|"
                       r"context_length_exceeded|prompt is too long|"
                       r"tokens \+ .?max_new_tokens.? must be", re.IGNORECASE)
MOST = 200  # characters of a server's reason quoted in a one-line error


def response_format(dialect: str, schema: dict, name: str) -> dict | None:
    """The request's response_format in `dialect` (None for text: it sends none)."""
    if dialect == "json_object":
        return {"type": "json_object", "schema": schema}
    if dialect == "json_schema":
        return {"type": "json_schema",
                "json_schema": {"name": name, "schema": schema, "strict": False}}
    return None


def schema_in_prompt(messages: list[dict], schema: dict) -> list[dict]:
    """The messages with the schema asked for at the end of the last one (the text dialect: a
    trailing system message would break chat templates that take one only at the start)."""
    last = dict(messages[-1])
    last["content"] = (f"{last['content']}\n\nAnswer with one JSON object, nothing else, that "
                       f"follows this JSON schema: {json.dumps(schema, separators=(',', ':'))}")
    return [*messages[:-1], last]


def server_reason(body, fallback: str = "") -> str:
    """What a refusal's body says, in one short line: the error's message (or FastAPI's
    `detail`), narrowed to pydantic's own message when it quotes a validation error."""
    text = ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        text = inner.get("message") or inner.get("detail") if isinstance(inner, dict) else inner
        text = text or body.get("detail") or ""
    elif isinstance(body, str):
        text = body
    text = str(text or fallback)
    found = _PYDANTIC_MSG.search(text)
    if found:
        loc = re.search(r"'loc': \(([^)]*)\)", text)
        where = ".".join(p.strip(" '") for p in loc.group(1).split(",")[1:] if p.strip(" '")) \
            if loc else ""
        text = (f"{where}: " if where else "") + (found.group(1) or found.group(2))
    text = " ".join(text.split())
    return text if len(text) <= MOST else text[:MOST - 3] + "..."


def says_invalid(status: int, reason: str) -> bool:
    """Whether a refusal says the request is wrong, so asking again cannot help: a 400 or 422
    always; another 4xx or a 5xx when its words say so (a 401, 403 or 429 is another story)."""
    if status in (400, 422):
        return True
    if status in (401, 403, 404, 408, 409, 429):
        return False
    return bool(_INVALID.search(reason))


def too_long(body, reason: str) -> bool:
    """Whether a refusal says the request is longer than the model takes (its words, or the
    error code in its body)."""
    inner = body.get("error", body) if isinstance(body, dict) else None
    code = inner.get("code") if isinstance(inner, dict) else None
    return code == "context_length_exceeded" or bool(_TOO_LONG.search(reason))


def about_response_format(reason: str) -> bool:
    """Whether a refusal is about the response_format (the dialect), not the rest."""
    return "response_format" in reason or "json_schema" in reason or "json_object" in reason
