"""The request bodies as clients sent them (``bodies.jsonl.gz``), so a run can be replayed.

``requests.jsonl`` keeps a digest of each request (sizes, a sha256, its new messages cut at
20,000 characters): enough to read, not to send again. With ``GatewayConfig.keep_bodies``
(every ``task --agent`` run) the gateway also keeps each body exactly as it was received, so
``agentrun load --replay`` can send an agent's own bytes again (only ``model`` set to the
load's). One JSON line per request, in the order the requests ended:

``seq``, ``request_id`` (the ``requests.jsonl`` line it belongs to), ``conversation``,
``path``, ``status``, ``received`` / ``answered`` (Unix times: the body read, the reply's
end) and the body as an edit (``agentrun.text_edits``) of the previous body of the same
conversation, ``base`` naming that line's ``seq`` (None: ``head`` and ``tail`` are 0 and
``text`` is the whole body). A body that is not UTF-8 is whole, as ``base64``.

Bounded: past ``MAX_KEPT_CHARS`` of stored text a body is left out (``dropped`` says why),
and the file is gzip, flushed after each line (a killed gateway leaves every line written
readable, ``read_sent`` reads it without the gzip trailer). Secrets are scrubbed from the
text as from every other record (``agentrun.secrets``): a scrubbed body is no longer
byte-identical, but no key is ever written.
"""

from __future__ import annotations

import base64
import gzip
import zlib
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentrun.lines import JSON_FILE_LIMIT, json_line, split_lines, strict_loads
from agentrun.secrets import Scrubber
from agentrun.text_edits import apply, edit

__all__ = ["BODIES_FILE", "MAX_KEPT_CHARS", "SentBodies", "SentBody", "read_sent"]

BODIES_FILE = "bodies.jsonl.gz"
MAX_KEPT_CHARS = 96 * 2**20  # of body text (edits) one gateway keeps: the file reads back under 128 MB
_BASES = 256  # conversations whose last body is held to edit against


@dataclass(frozen=True)
class SentBody:
    """One request as its client sent it (``body`` None: not kept, ``dropped`` says why)."""

    seq: int
    request_id: str
    conversation: str | None
    path: str
    status: int
    received: float
    answered: float
    body: str | None
    dropped: str | None = None


class SentBodies:
    """The writer of ``bodies.jsonl.gz``; used from one thread (the recorder's)."""

    def __init__(self, path: Path, secrets: Iterable[str | None] = ()) -> None:
        self.path = path
        self._scrubber = Scrubber(secrets)
        self._fh = gzip.open(path, "ab", compresslevel=6)  # noqa: SIM115 - open until close()
        self._seq = 0
        self._kept = 0
        self._bases: OrderedDict[str, tuple[int, str]] = OrderedDict()

    def add(self, head: dict[str, Any], raw: bytes) -> None:
        """One request: ``head`` holds request_id, conversation, path, status, received, answered."""
        self._seq += 1
        key = head.get("conversation") or ""
        line: dict[str, Any] = {"seq": self._seq, **head}
        try:
            text = self._scrubber.text(raw.decode("utf-8"))
        except UnicodeDecodeError:
            text = None
        size = len(text) if text is not None else len(raw) * 4 // 3
        if self._kept + size > MAX_KEPT_CHARS:
            line["dropped"] = f"past the {MAX_KEPT_CHARS // 2**20} MB of bodies a gateway keeps"
            self._bases.pop(key, None)  # the next body of this conversation cannot be an edit
        elif text is None:
            line["base64"] = base64.b64encode(raw).decode()
            self._kept += size
        else:
            base = self._bases.get(key)
            start, end, middle = edit(base[1], text) if base else (0, 0, text)
            line.update(base=base[0] if base else None, head=start, tail=end, text=middle)
            self._kept += len(middle)
            self._bases[key] = (self._seq, text)
            self._bases.move_to_end(key)
            if len(self._bases) > _BASES:
                self._bases.popitem(last=False)
        self._fh.write((json_line(line) + "\n").encode())
        self._fh.flush(zlib.Z_SYNC_FLUSH)  # readable up to here if the process dies

    def close(self) -> None:
        if not self._fh.closed:
            self._fh.close()


def _gunzip(path: Path, limit: int) -> str:
    """The file's text, also when the gzip trailer is missing (a gateway that was killed)."""
    inflate = zlib.decompressobj(wbits=31)
    out = bytearray()
    with path.open("rb") as fh:
        while chunk := fh.read(1 << 20):
            out += inflate.decompress(chunk, limit + 1 - len(out))
            if len(out) > limit or inflate.unconsumed_tail:
                raise ValueError(f"larger than {limit // 2**20} MB once decompressed")
            while inflate.eof and inflate.unused_data:  # members appended by a later gateway
                rest, inflate = inflate.unused_data, zlib.decompressobj(wbits=31)
                out += inflate.decompress(rest, limit + 1 - len(out))
    return out.decode("utf-8", errors="replace")


def _body(line: dict[str, Any], texts: dict[int, str]) -> str | None:
    if "base64" in line:
        return base64.b64decode(line["base64"]).decode("utf-8", errors="surrogateescape")
    if not isinstance(line.get("text"), str):
        return None
    base = line.get("base")
    if base is None:
        return str(line["text"])
    if base not in texts:
        raise ValueError(f"line {line.get('seq')} edits line {base}, which is not in the file")
    return apply(texts[base], (int(line["head"]), int(line["tail"]), str(line["text"])))


def read_sent(path: Path, *, limit: int = JSON_FILE_LIMIT) -> list[SentBody]:
    """Every request of a ``bodies.jsonl.gz``, each body rebuilt whole, in the file's order.
    A last line cut short (the gateway killed mid-write) is left out; anything else that is
    not this format is a ``ValueError``."""
    lines = split_lines(_gunzip(path, limit))
    out: list[SentBody] = []
    texts: dict[int, str] = {}
    for i, text in enumerate(lines):
        try:
            line = strict_loads(text)
        except ValueError:
            if i == len(lines) - 1:
                break  # cut short
            raise
        if not isinstance(line, dict) or not isinstance(line.get("seq"), int):
            raise ValueError(f"line {i + 1} is not a recorded request body")
        body = _body(line, texts)
        if body is not None and "base64" not in line:
            texts[line["seq"]] = body
        out.append(
            SentBody(
                seq=line["seq"],
                request_id=str(line.get("request_id") or ""),
                conversation=line.get("conversation"),
                path=str(line.get("path") or ""),
                status=int(line.get("status") or 0),
                received=float(line.get("received") or 0.0),
                answered=float(line.get("answered") or 0.0),
                body=body,
                dropped=line.get("dropped"),
            )
        )
    return out
