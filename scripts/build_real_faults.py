"""Build agentrun/replay/real_faults.jsonl: real model outputs turned into fault templates.

Sources: the engines' tool-parser test outputs (tests/unit/repair/engine_outputs.py, labelled by
family and source) and the local model's recorded replies (tests/fixtures/local_model/
raw_messages.jsonl, Qwen2.5-Coder-1.5B on llama.cpp). For each single-call output, the call's
name and its JSON-object arguments are found in the text and replaced by placeholders, so the
replay model can re-target the very same text at a task's call. Outputs whose arguments are
written one parameter at a time (XML ``<parameter name=..>`` / ``<parameter=..>`` / ``<param>``,
``<arg_key>``/``<arg_value>`` pairs, pythonic ``k=v``, Gemma's ``k:v``) keep their first parameter as
the pattern each argument is written in, and the text between the first two as the separator
(``style.param``, ``style.sep``, ``style.values``). A template is kept only when corrected mode reads
a probe call back from it exactly. Run: python scripts/build_real_faults.py
"""

from __future__ import annotations

import json
import re
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


K, V = "\u27e6K\u27e7", "\u27e6V\u27e7"
_Q = '<|"|>'


def _unit_patterns(key: str) -> list[tuple[str, str]]:
    """(regex for one parameter named ``key`` with its value as group v, value style)."""
    k = re.escape(key)
    return [
        (rf"<(?P<tag>[\w:|｜]*param(?:eter)?)\s*name=\"{k}\"[^>]*>(?P<v>.*?)</(?P=tag)>", "text"),
        (rf"<parameter={k}>(?P<v>.*?)</parameter>", "text"),
        (rf"<arg_key>{k}</arg_key>\s*<arg_value>(?P<v>.*?)</arg_value>", "text"),
        (rf"(?<![\w.]){k}=(?P<v>'[^']*'|\"[^\"]*\"|[^,)\]]+)", "python"),
        (rf"(?<![\w.]){k}:(?P<v>{re.escape(_Q)}.*?{re.escape(_Q)}|<escape>.*?<escape>|[^,}}]+)", "gemma"),
    ]


def _unit(text: str, key: str, start: int) -> tuple[re.Match[str], str] | None:
    hits = [
        (m, style) for pat, style in _unit_patterns(key) if (m := re.compile(pat, re.S).search(text, start))
    ]
    return min(hits, key=lambda h: h[0].start()) if hits else None


def param_template(
    family: str, source: str, text: str, name: str, args: dict[str, Any]
) -> dict[str, Any] | None:
    """The template of a single-call output whose arguments are written one parameter at a time."""
    at = text.find(name)
    if at < 0 or not args:
        return None
    units, pos = [], at + len(name)
    for key in args:
        got = _unit(text, key, pos)
        if got is None or (units and got[1] != units[0][1]):
            return None
        units.append(got)
        pos = got[0].end()
    (first, style), last = units[0], units[-1][0]
    m = first
    param = text[m.start() : m.start("v")] + V + text[m.end("v") : m.end()]
    param = param.replace(next(iter(args)), K, 1)
    sep = text[first.end() : units[1][0].start()] if len(units) > 1 else ("\n" if style == "text" else ", ")
    if style == "gemma":
        sep = "," if len(units) == 1 else sep
        if "<escape>" in text[m.start("v") : m.end("v")]:
            style = "escape"
    if text[m.start("v") : m.end("v")].startswith("\n") and style == "text":
        param = param.replace(V, "\n" + V + "\n") if V + "\n" not in param else param
    body = text[:at] + NAME + text[at + len(name) : first.start()] + ARGS + text[last.end() :]
    after = text[last.end() :]
    if name in after or (style in ("gemma", "escape") and not re.match(r"\}(<|$)", after)):
        return None  # the last argument's value was not read whole (a nested value)
    if style == "python" and not re.match(r"\)(\]|<|\s|$)", after):
        return None
    style_row = {"indent": None, "separators": [",", ": "], "raw_newlines": False}
    return {
        "family": family,
        "source": source,
        "text": body,
        "style": {**style_row, "param": param, "sep": sep, "values": style},
    }


def _round_trips(row: dict[str, Any]) -> bool:
    """Corrected mode reads two probe calls back exactly from the template."""
    from agentrun.messages import Message
    from agentrun.repair import correct
    from agentrun.replay.real_faults import fault_from_row, render
    from agentrun.toolset import builtin_specs

    fault = fault_from_row(row)
    for call in PROBES:
        got = correct(Message(role="assistant", content=render(fault, [call])), builtin_specs())
        if [(c.name, c.arguments) for c in got.calls] != [call] or got.rejected:
            return False  # read back otherwise, or with a sibling the model got feedback for
    return True


PROBES = [
    ("write_file", {"path": "todo.py", "content": 'import json\n\nprint("a \\"quoted\\" {x}")\n'}),
    ("run_shell", {"command": "python -m pytest -q tests/", "timeout": 60}),
]


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
        if len(calls) != 1:
            continue
        row = template(family, source, text, *calls[0])
        if row is None and (param := param_template(family, source, text, *calls[0])) and _round_trips(param):
            row = param
        if row is not None:
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
