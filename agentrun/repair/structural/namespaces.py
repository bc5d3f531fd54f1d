"""Tag namespaces spelled other ways than ``ns:tag``, rewritten to it for the XML-ish reader."""

from __future__ import annotations

import re

__all__ = ["namespaced"]

_BAR_PREFIX_RE = re.compile(r"(</?)｜(?!DSML｜)(\w+)｜")  # GigaChat 3.5's GCML (DSML has its own reader)
_PIPE_NS_RE = re.compile(r"(</?)(\w+)\|(\w+)>")  # K2V3's <ifm|tool_call>
_SUFFIX_NS_RE = re.compile(
    r"(</?)(tool_calls?|tool_sep|arg_key|arg_value|arg_type|invoke|parameter|function_calls?):([^<>\s]+)>"
)


def _suffix_ns(m: re.Match[str]) -> str:
    """``</tool_call:ns>`` -> ``</ns:tool_call>``; a namespace that is not a word keeps its length
    as one (``a+b(c``: vLLM's HY v4 test of regex metacharacters in the suffix)."""
    ns = m.group(3) if m.group(3).isidentifier() else "n" * len(m.group(3))
    return f"{m.group(1)}{ns}:{m.group(2)}>"


def namespaced(text: str) -> str:
    """A tag's namespace spelled another way, as ``ns:tag`` (same length, so the same spans):
    ``<｜GCML｜invoke`` (GigaChat 3.5), ``<ifm|tool_call>`` (K2V3), ``<tool_call:opensource>`` (HY v4)."""
    if "｜" in text:
        text = _BAR_PREFIX_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}::", text)
    if "|" in text:
        text = _PIPE_NS_RE.sub(r"\1\2:\3>", text)
    if ":" in text:
        text = _SUFFIX_NS_RE.sub(_suffix_ns, text)
    return text
