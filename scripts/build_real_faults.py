"""Build agentrun/replay/real_faults.jsonl: real model outputs turned into fault templates.

Sources: the engines' tool-parser test outputs (tests/unit/repair/engine_outputs.py, labelled by
family and source) and the local model's recorded replies (tests/fixtures/local_model/
raw_messages.jsonl, Qwen2.5-Coder-1.5B on llama.cpp). For each single-call output, the call's
name and its JSON-object arguments are found in the text and replaced by placeholders, so the
replay model can re-target the very same text at a task's call. Outputs whose arguments are not
written as a JSON object (XML parameters, pythonic, Gemma's key:value) are skipped: re-targeting
them would need a renderer, that is a fault we designed. Run: python scripts/build_real_faults.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
NAME, ARGS = "\u27e6NAME\u27e7", "\u27e6ARGS\u27e7"
LOCAL = "tests/fixtures/local_model/raw_messages.jsonl"
OUT = "agentrun/replay/real_faults.jsonl"


def _objects(text: str) -> list[tuple[int, int, Any]]:
    decoder, out, i = json.JSONDecoder(strict=False), [], text.find("{")  # raw newlines too
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            pass
        else:
            out.append((i, end, value))
        i = text.find("{", i + 1)
    return out


def _style(raw: str) -> dict[str, Any]:
    indent = None
    if "\n" in raw:
        line = raw.split("\n", 1)[1]
        indent = len(line) - len(line.lstrip(" ")) or None
    separators = [",", ": "] if ": " in raw or indent else [",", ":"]
    # the model wrote newlines inside strings unescaped (invalid JSON): the template keeps that
    return {"indent": indent, "separators": separators, "raw_newlines": _raw_newlines(raw)}


def _raw_newlines(raw: str) -> bool:
    try:
        json.loads(raw)
    except ValueError:
        return True
    return False


def template(family: str, source: str, text: str, name: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """The fault template of one real single-call output, or None when it cannot be re-targeted."""
    if not args:  # "{}" says nothing of how the family writes arguments
        return None
    spans = [(s, e) for s, e, v in _objects(text) if v == args]
    if not spans:
        return None
    start, end = spans[-1]  # the innermost-last match is the arguments, not the envelope
    before = text[:start]
    at = before.rfind(f'"{name}"')
    at = at + 1 if at >= 0 else before.rfind(name)
    if at < 0 or name in text[end:]:
        return None
    body = before[:at] + NAME + before[at + len(name) :] + ARGS + text[end:]
    return {"family": family, "source": source, "text": body, "style": _style(text[start:end])}


def _local_rows() -> list[dict[str, Any]]:
    rows = []
    for line in (ROOT / LOCAL).read_text().splitlines():
        rec = json.loads(line)
        content = (rec.get("message") or {}).get("content") or ""
        for _s, _e, value in _objects(content):
            if isinstance(value, dict) and isinstance(value.get("arguments"), dict) and "name" in value:
                where = f"{rec['scenario']} turn {rec.get('turn', rec.get('variant'))}"
                src = f"{LOCAL} ({where}, Qwen2.5-Coder-1.5B on llama.cpp)"
                kind = (rec.get("parsed") or {}).get("kind", "reply")
                row = template(f"local_{kind}", src, content, value["name"], value["arguments"])
                if row:
                    rows.append(row)
                break
    return rows


def build() -> str:
    """The text of real_faults.jsonl, from the two sources."""
    sys.path.insert(0, str(ROOT))
    from tests.unit.repair.engine_outputs import CASES

    rows = []
    for family, source, text, calls in CASES:
        if len(calls) == 1 and (row := template(family, source, text, *calls[0])):
            rows.append(row)
    rows += _local_rows()
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def main() -> int:
    out = ROOT / OUT
    out.write_text(build(), encoding="utf-8")
    print(f"{len(out.read_text().splitlines())} templates -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
