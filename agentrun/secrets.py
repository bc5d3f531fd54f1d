"""One scrubber for every output: secrets are removed from strings before they are encoded.

Scrubbing encoded text (a ``replace`` on a JSON line) misses a key holding ``"``, ``\\`` or
non-ASCII characters, because the encoder has already escaped them. So every writer
(trajectory, result.json, spans, error messages, console lines) scrubs the *strings* it is
about to encode with ``scrub`` / ``scrub_data``. Each secret is also looked for in the forms
a server's echo may carry it in: JSON-escaped (an error body that quotes the request
headers), ``\\u``-escaped, Python ``repr`` and percent-encoded.

Secrets are registered process-wide (``register``): the model client registers its API key
when it is made, so an error message built anywhere from a server's answer is scrubbed by
whoever prints or writes it. Placeholder keys (``EMPTY``, ``dummy`` ...) and very short ones
are not secrets and would mangle ordinary text.
"""

from __future__ import annotations

import json
import re
import threading
import urllib.parse
from collections.abc import Iterable
from typing import Any

__all__ = ["REDACTED", "Scrubber", "forms", "register", "scrub", "scrub_data"]

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 6
PLACEHOLDERS = frozenset({"empty", "dummy", "none", "null", "no-key", "sk-no-key-required", "x" * 6})
_CREDENTIAL_PATTERNS = (
    (re.compile(r"(?i)\b(bearer|basic)\s+(?!\[REDACTED\])[A-Za-z0-9\-._~+/]{8,}=*"), r"\1 " + REDACTED),
    (
        re.compile(
            r"(?i)((?:authorization|api[-_]?key)\"?\s*[:=]\s*\"?(?:(?:bearer|basic|token)\s+)?+)"
            r"(?!\[REDACTED\])[^\s\"',}]+"
        ),
        r"\1" + REDACTED,
    ),
)

_lock = threading.Lock()
_registered: set[str] = set()


def is_secret(value: str | None) -> bool:
    """A value worth scrubbing: long enough and not a well-known placeholder."""
    return bool(value) and len(value or "") >= MIN_SECRET_LEN and (value or "").lower() not in PLACEHOLDERS


def forms(secret: str) -> set[str]:
    """The secret as it may appear in text: raw, JSON-escaped, \\u-escaped, repr, percent-encoded."""
    found = {
        secret,
        json.dumps(secret, ensure_ascii=False)[1:-1],
        json.dumps(secret)[1:-1],
        repr(secret)[1:-1],
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret, safe=""),
    }
    return {f for f in found if len(f) >= MIN_SECRET_LEN}


def register(*secrets: str | None) -> None:
    """Scrub these values from every output of this process from now on."""
    with _lock:
        for secret in secrets:
            if secret is not None and is_secret(secret):
                _registered.update(forms(secret))


class Scrubber:
    """Replaces the registered secrets and ``extra`` ones with ``[REDACTED]``; ``data`` does it
    to every string (keys too) of a JSON-like value.

    ``patterns`` also redacts credential-looking text (``Bearer xyz``, ``api_key=xyz``) whose
    value was never registered: right for error messages and spans, wrong for a trajectory,
    where ``api_key = os.environ[...]`` in the model's code must stay as written (a resumed
    run replays that history)."""

    def __init__(self, extra: Iterable[str | None] = (), *, patterns: bool = False) -> None:
        self._patterns = patterns
        found: set[str] = set()
        for secret in extra:
            if secret is not None and is_secret(secret):
                found.update(forms(secret))
        self._extra = frozenset(found)

    def _needles(self) -> list[str]:
        with _lock:
            needles = self._extra | _registered
        return sorted(needles, key=len, reverse=True)  # longest first: a form may contain another

    def text(self, value: str) -> str:
        return _scrub_text(value, self._needles(), self._patterns)

    def data(self, value: Any) -> Any:
        """``value`` with every string in it scrubbed (dicts, lists and tuples walked)."""
        needles = self._needles()
        return _walk(value, lambda s: _scrub_text(s, needles, self._patterns))


def _scrub_text(value: str, needles: list[str], patterns: bool) -> str:
    for needle in needles:
        if needle in value:
            value = value.replace(needle, REDACTED)
    if patterns:
        for pattern, replacement in _CREDENTIAL_PATTERNS:
            value = pattern.sub(replacement, value)
    return value


def _walk(value: Any, fix: Any) -> Any:
    if isinstance(value, str):
        return fix(value)
    if isinstance(value, dict):
        return {(fix(k) if isinstance(k, str) else k): _walk(v, fix) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(v, fix) for v in value]
    return value


_messages = Scrubber(patterns=True)
_data = Scrubber()


def scrub(text: str) -> str:
    """A message (an error, a console line) without any registered secret or credential-looking text."""
    return _messages.text(text)


def scrub_data(value: Any) -> Any:
    """A JSON-like value with every registered secret removed from its strings."""
    return _data.data(value)
