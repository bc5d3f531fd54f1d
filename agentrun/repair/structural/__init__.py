"""Tool calls recognised by their structure, anchored on the tool names the request offered.

The per-family readers (``repair.envelopes``, ``repair.formats``) each know one engine's exact
spelling; a model served by another engine, or under another template, writes the same call
in a slightly different dress and is missed. The readers here know the *shapes* instead:

* ``xmlish``: an XML-ish invocation under any wrapper, the tool's name as an attribute
  (``<invoke name=..>``, ``<tool_call name=..>``), as a child (``<name>..</name>``) or as the
  tag itself (``<search>..</search>``), its parameters as attributes, as child tags named
  ``parameter``/``param``/``arg``, as ``<parameter=k>``, as ``<arg_key>``/``<arg_value>``
  pairs, or as child tags that are the argument names; typed by ``string=`` or not at all;
* ``named_json``: a JSON object naming a tool under ``name``/``function``/``tool``/
  ``tool_name`` with ``arguments``/``parameters``/``args``/``input``, in any key order,
  wherever it sits (after end-of-message tokens, inside a fence of another language);
* ``conventions``: text conventions some servers and agents use (``[Calling tool: add({..})]``,
  a ```tool_code fence of Python calls), a bare pythonic call to a requested tool, and a reply that is
  one line of a requested tool's name and ``key="value"`` pairs;
* ``labelled``: a line naming the tool and the next its JSON arguments (ReAct's
  ``Action:``/``Action Input:``, Qwen-Agent's ``✿FUNCTION✿:``/``✿ARGS✿:``);
* ``colon_tokens``: GLM's name-then-pairs body spelled in ``<|NAME:start|>`` tokens (Solar Open 2);
* ``token_tags``: the same XML-ish tree spelled in special tokens (``<|open|>call tool=..<|sep|>``,
  Kimi K3);
* ``prefixed``: a requested tool's name marked by a call id, then its JSON arguments
  (``functions.ping:0{..}``, Kimi K2's id without its tokens; gptme's ``@shell(id): {..}``);
* ``shell_fence``: the one fence of a reply tagged as a shell command (```mswea_bash_command), when
  the only tool offered is a shell (mini-swe-agent's action); a plain ```bash block is code shown;
* ``harmony_stripped``: a gpt-oss call whose special tokens the server stripped (``to=functions.NAME
  json{..}``);
* ``harmony_offered``: a gpt-oss message to a recipient the request offered by that very name
  (``to=browser.search``), where ``functions.`` is the family reader's;
* ``tool_fence``: a fence tagged with a requested one-input tool's name (goose's ```execute);
* ``gemma4_named``: a requested tool's name then Gemma 4's braced arguments, without ``call:``;
* ``tool_label``: Code World Model's ``<tool: LABEL>`` block, the tool's name and input inside;
* ``line_prefixed``: a requested tool's name on its own line, then its parameters as elements;
* ``bracketed``: a requested tool's name in square brackets, its JSON, ``[/NAME]`` (LM Studio-like);
  a ``[TOOL_CALL]`` block holding ``{tool => "NAME", args => {--k v}}``;
* ``separated``: a DeepSeek call body marked by its ``<｜tool▁sep｜>`` token alone, and a
  ``<tool_call>`` whose first line is the tool's name and the rest its JSON arguments.

``Names`` is the set of requested tool names, or None when it is not known (the streaming
gateway asks "may this become a call?" without the request at hand): then only the shapes
that mark intent by themselves are read, with any name. Every reader is pure and never raises.
"""

from __future__ import annotations

from collections.abc import Callable

from agentrun.repair.candidates import Found
from agentrun.repair.formats.gemma import extract_gemma4_named
from agentrun.repair.formats.harmony import extract_harmony_offered, extract_harmony_stripped
from agentrun.repair.structural.bracketed import extract_bracketed, extract_flag_hash
from agentrun.repair.structural.colon_tokens import extract_colon_tokens
from agentrun.repair.structural.conventions import (
    extract_attribute_line,
    extract_bare_calls,
    extract_calling_tool,
    extract_tool_code,
)
from agentrun.repair.structural.labelled import extract_labelled
from agentrun.repair.structural.line_prefixed import extract_line_prefixed
from agentrun.repair.structural.named_json import extract_named_json
from agentrun.repair.structural.names import Names
from agentrun.repair.structural.prefixed import extract_prefixed_json
from agentrun.repair.structural.separated import extract_name_line_json, extract_separated
from agentrun.repair.structural.shell_fence import extract_shell_fence, extract_tool_fence
from agentrun.repair.structural.token_tags import extract_token_tags
from agentrun.repair.structural.tool_label import extract_tool_label
from agentrun.repair.structural.xmlish import extract_invocations

__all__ = ["LOOSE_READERS", "STRICT_READERS", "Names"]

Reader = Callable[[str, Names], list[Found]]

STRICT_READERS: tuple[Reader, ...] = (
    extract_invocations,
    extract_calling_tool,
    extract_tool_code,
    extract_separated,
    extract_name_line_json,
    extract_token_tags,
    extract_colon_tokens,
    extract_tool_label,
    extract_harmony_offered,
)
"""Shapes that mark a call by themselves: found even beside native calls."""

LOOSE_READERS: tuple[Reader, ...] = (
    extract_named_json,
    extract_prefixed_json,
    extract_labelled,
    extract_bare_calls,
    extract_shell_fence,
    extract_tool_fence,
    extract_line_prefixed,
    extract_gemma4_named,
    extract_bracketed,
    extract_flag_hash,
    extract_harmony_stripped,
    extract_attribute_line,
)
"""Shapes that are calls only for a requested tool, and only when no native call came."""
