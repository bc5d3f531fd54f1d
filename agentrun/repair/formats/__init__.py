"""Native tool-call formats added for issue 13, one module per kind of syntax.

``harmony`` (gpt-oss), ``gemma`` (Gemma 4, FunctionGemma), ``xml_calls`` (MiniCPM 5,
``<function name=..>{json}``), ``json_envelopes`` (Command R, Jamba/Hunyuan ``<tool_calls>``,
Nemotron, LongCat, Granite 20B FC, Phi-4-mini, GigaChat 3, Apertus, Functionary v3.2),
``pythonic`` (OLMo 3, LFM2, Llama 4); ``jsonlist`` reads lists of calls one element at a time.
The older families live in ``repair.envelopes``; ``repair.extract`` runs both.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentrun.repair.candidates import Found
from agentrun.repair.formats.gemma import extract_function_gemma, extract_gemma4
from agentrun.repair.formats.harmony import HARMONY_TOKENS, extract_harmony
from agentrun.repair.formats.json_envelopes import JSON_ENVELOPE_EXTRACTORS, JSON_ENVELOPE_TOKENS
from agentrun.repair.formats.pythonic import PYTHONIC_EXTRACTORS
from agentrun.repair.formats.xml_calls import extract_minicpm

__all__ = ["FORMAT_EXTRACTORS", "FORMAT_TOKENS"]

FORMAT_EXTRACTORS: tuple[Callable[[str], list[Found]], ...] = (
    extract_harmony,
    extract_gemma4,
    extract_function_gemma,
    extract_minicpm,
    *JSON_ENVELOPE_EXTRACTORS,
    *PYTHONIC_EXTRACTORS,
)

FORMAT_TOKENS = re.compile(
    HARMONY_TOKENS + "|" + JSON_ENVELOPE_TOKENS + r"|<\|channel\|>\w*(?:<\|message\|>)?|<\|message\|>"
)
