"""Where an XML-ish element that a call or argument opened ends: its body, its end, whether it closed."""

from __future__ import annotations

import re
from functools import lru_cache

from agentrun.repair.structural.values import past_open_value

__all__ = ["element"]


def element(text: str, m: re.Match[str], *, last_close: bool = False) -> tuple[str, int, bool]:
    """(body, end, closed) of the element opened by ``m``; unclosed ones end where the next
    element of the same tag opens, or at the end of the text. ``last_close`` (an argument's
    element inside a call's body): its close is the last one before the same tag opens again,
    so a value that shows the tag's own close (``<content>.. </content> ..</content>``, a file
    about XML) keeps it."""
    if m.group(3):
        return "", m.end(), True
    close_re, again_re = _ends(m.group(1))
    close = close_re.search(text, m.end())
    if last_close and close is not None:
        again = again_re.search(text, close.end())
        for later in close_re.finditer(text, close.end(), again.start() if again else len(text)):
            close = later
    while close is not None and (past := past_open_value(text, m.end(), close.start(), again_re)) != -1:
        close = close_re.search(text, past) if past >= 0 else None
    again = again_re.search(text, m.end(), close.start() if close else len(text))
    if close is not None and (again is None or close.start() < again.start()):
        return text[m.end() : close.start()], close.end(), True
    stop = again.start() if again is not None else len(text)
    return text[m.end() : stop], stop, False


@lru_cache(maxsize=128)
def _ends(tag: str) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The closing tag of ``tag``, and another opening of it."""
    return re.compile(rf"</{re.escape(tag)}\s*>"), re.compile(rf"<{re.escape(tag)}[\s>]")
