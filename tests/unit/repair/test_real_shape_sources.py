"""Issue 21's last two shapes, each from a real source: a fenced block tagged ``tool_code`` that
holds a Python call (Gemma 3 as Google's Gemma cookbook recorded it, and AI Singapore's SEA-LION
guide), and a bare JSON call that the end-of-message and header tokens follow, with more text
after them (Llama 3.1 as a llama-stack issue and mlx-omni-server's tests recorded it). Every text
is verbatim; the tools are the ones its source declared."""

from __future__ import annotations

from typing import Any

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.toolset import ToolSpec

STRING = {"type": "string"}


def tool(name: str, **props: Any) -> ToolSpec:
    return ToolSpec(name=name, description="", parameters={"type": "object", "properties": props})


def calls(text: str, *tools: ToolSpec) -> list[tuple[str, dict[str, Any]]]:
    result = correct(Message(role="assistant", content=text), list(tools), finish_reason="stop")
    return [(c.name, c.arguments) for c in result.calls]


# --- a fenced block tagged tool_code -------------------------------------------------------------

# google-gemini/gemma-cookbook Gemma/[Gemma_3]Function_Calling_with_HF.ipynb, cell bGF5oJyntu7C's
# recorded output (commit b1d802f1477bc79f43a0c65ecec904d556513c1d, 2025-03-26); the prompt declares
# `def search(query:str)`.
GEMMA_HF_SEARCH = (
    "\n```tool_code\n"
    'search(query="Which teams played in the Cricket ICC Champions Trophy 2025 final and who won?")\n'
    "```\n"
)

# google-gemini/gemma-cookbook
# Gemma/[Gemma_3]Function_Calling_Routing_and_Monitoring_using_Gemma_Google_Genai.ipynb, cell
# edNtN1bSdxpQ's recorded output of gemma-3-27b-it (commit 85d861074ef2aa0992aeeae84611c3a5ac4d216f,
# 2025-10-28); the router prompt declares `retrieve_docs(query:str)` and `web_search(query:str)`.
GEMMA_ROUTER = (
    "Okay, I understand. The user is asking a general knowledge question about Messi. Since this "
    "isn't related to Vibe coding specifically, I should use the `web_search` tool to find "
    "information about him.\n\n"
    "```tool_code\n"
    'web_search(query="who is Messi?")\n'
    "```\n"
)

# google-gemini/gemma-cookbook Gemma/[Gemma_3]Chess.ipynb, cell P4rU6XjRU6xK: response1, the
# model's turn between the prompt's "<start_of_turn>model\n" and the next "<start_of_turn>user"
# (commit 2ab79c22cc4faba47dc1de65675ebc6689771157, 2025-05-13); the prompt lists
# `get_best_move()`. The call is wrapped in print() and Gemma's end-of-turn token follows the fence.
GEMMA_CHESS = "Okay, let's figure out the best move for Black!\n\n```tool_code\nprint(get_best_move())\n```<end_of_turn>"

# google-gemini/gemma-cookbook Gemma/[Gemma_3]Meme_Generator.ipynb, cell rzhOytwr6Pgm's recorded
# output (commit 6379d27d8bdb4144396e353204887740507d21b7, 2025-03-12); the prompt lists
# `generate_meme(image, top_text, middle_text, bottom_text)`.
GEMMA_MEME = (
    "Okay, I'll create a funny meme based on the image provided.\n\n"
    "Here's the meme I'll generate:\n\n"
    "```tool_code\n"
    'generate_meme(image="/content/meme.jpg", top_text="Me when I hear a creak", '
    'middle_text="It could be anything!", bottom_text="Probably just the cat.")\n'
    "```\n"
)

# aisingapore/sealion guides/tool_calling/tool_calling-02_SEA-LION.md, "Example Response
# (Tool-calling not enforced)" of Gemma-SEA-LION-v4-27B-IT (commit
# 172db982aca557a80b59fe04ba8b5ef3f3c74a5c, 2026-02-05); the tools are build_tool_schema() in
# guides/tool_calling/tool_examples.md.
SEA_LION = '```tool_code\nget_time(timezone="Asia/Singapore")\n```'

SEA_LION_TOOLS = (
    tool("get_weather", location=STRING),
    tool("get_time", timezone=STRING),
    tool("search_web", query=STRING),
)

# google-gemini/gemma-cookbook Gemma/[Gemma_3]Function_Calling_with_HF_document_summarizer.ipynb,
# cell bGF5oJyntu7C's recorded output (commit 2ab0f809492b42a7a310abbe27f699f9783c7fba, 2025-04-07):
# the call's result assigned to a name, then printed; the prompt declares read_file(filename).
GEMMA_SUMMARIZER = (
    '\nOkay, I can help with that. I will read the file "notes.txt" and provide a summary of its contents.'
    "\n\n```tool_code\nsummary = read_file(filename='notes.txt')\nprint(summary)\n```\n"
)

TOOL_CODE_CASES = [
    pytest.param(
        GEMMA_SUMMARIZER,
        (tool("read_file", filename=STRING),),
        [("read_file", {"filename": "notes.txt"})],
        id="gemma-cookbook-summarizer-assignment",
    ),
    pytest.param(
        GEMMA_HF_SEARCH,
        (tool("search", query=STRING),),
        [
            (
                "search",
                {"query": "Which teams played in the Cricket ICC Champions Trophy 2025 final and who won?"},
            )
        ],
        id="gemma-cookbook-hf-search",
    ),
    pytest.param(
        GEMMA_ROUTER,
        (tool("retrieve_docs", query=STRING), tool("web_search", query=STRING)),
        [("web_search", {"query": "who is Messi?"})],
        id="gemma-cookbook-router",
    ),
    pytest.param(GEMMA_CHESS, (tool("get_best_move"),), [("get_best_move", {})], id="gemma-cookbook-chess"),
    pytest.param(
        GEMMA_MEME,
        (tool("generate_meme", image=STRING, top_text=STRING, middle_text=STRING, bottom_text=STRING),),
        [
            (
                "generate_meme",
                {
                    "image": "/content/meme.jpg",
                    "top_text": "Me when I hear a creak",
                    "middle_text": "It could be anything!",
                    "bottom_text": "Probably just the cat.",
                },
            )
        ],
        id="gemma-cookbook-meme",
    ),
    pytest.param(
        SEA_LION, SEA_LION_TOOLS, [("get_time", {"timezone": "Asia/Singapore"})], id="sea-lion-guide"
    ),
]


@pytest.mark.parametrize(("text", "tools", "expected"), TOOL_CODE_CASES)
def test_a_tool_code_fence_from_a_real_source_is_its_call(
    text: str, tools: tuple[ToolSpec, ...], expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert calls(text, *tools) == expected


# --- a bare JSON call, then the end-of-message and header tokens, then more text --------------------

# ogx-ai/ogx (was meta-llama/llama-stack) issue #389, 2024-11-07: Llama-3.1-8B's output for
# test_chat_completion_with_tool_calling_streaming, whose tool is sample_tool_definition's
# get_weather(location) (llama_stack/providers/tests/inference/test_inference.py at cde9bc138).
# The model ran past <|eom_id|>, wrote the same call twice more, then prose.
LLAMA_STACK_389 = (
    '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"location": "San Francisco, CA"}}'
    "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"location": "San Francisco, CA"}}'
    "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    '<|python_tag|>{"type": "function", "name": "get_weather", "parameters": {"location": "San Francisco, CA"}}'
    "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    "Please note that the output of the function call is not provided as it is dependent on the current "
    "weather conditions that are not available in this system.<|eot_id|>"
)

# madroidmaq/mlx-omni-server tests/chat/mlx/tools/test_llama3_tools_parser.py,
# TestLlama3ToolParser.setUp's invalid_responses[4] and [3], run by test_decode_invalid_json
# (commit 8fc2b8146be6169860b91fba5f0503145c15cc52, 2025-08-02); the test declares no tools, so the
# tool is the one the texts call.
MLX_OMNI_PROSE = (
    '{"type": "function", "name": "get_current_weather", "parameters": {"location": "Boston", "unit": "fahrenheit"}}'
    "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
    'This JSON represents a function call to `get_current_weather` with the location set to "Boston" '
    'and the unit set to "fahrenheit".\n            '
)
MLX_OMNI_TAG = (
    '<|python_tag|>{"name": "get_current_weather", "parameters": {"location": "Boston", "unit": "celsius"}}'
    "<|eom_id|><|start_header_id|>assistant<|end_header_id|>\n            "
)

WEATHER = tool("get_weather", location=STRING)
CURRENT_WEATHER = tool("get_current_weather", location=STRING, unit=STRING)

END_TOKEN_CASES = [
    pytest.param(
        LLAMA_STACK_389,
        (WEATHER,),
        [("get_weather", {"location": "San Francisco, CA"})],
        id="llama-stack-389",
    ),
    pytest.param(
        MLX_OMNI_PROSE,
        (CURRENT_WEATHER,),
        [("get_current_weather", {"location": "Boston", "unit": "fahrenheit"})],
        id="mlx-omni-server-prose",
    ),
    pytest.param(
        MLX_OMNI_TAG,
        (CURRENT_WEATHER,),
        [("get_current_weather", {"location": "Boston", "unit": "celsius"})],
        id="mlx-omni-server-python-tag",
    ),
]


@pytest.mark.parametrize(("text", "tools", "expected"), END_TOKEN_CASES)
def test_a_json_call_before_end_of_message_and_header_tokens_is_its_call(
    text: str, tools: tuple[ToolSpec, ...], expected: list[tuple[str, dict[str, Any]]]
) -> None:
    assert calls(text, *tools) == expected
