"""Recovery of the repair pipeline per source of model output, held-out sources marked.

    python bench/repair_recovery.py [--no-write]

Runs ``correct()`` over every case of the repair corpus (tests/fixtures/repair/sources.py: the
engines' parser-test outputs, agentrun's own corpus, and the cases gathered from other
projects' parser tests) and prints, per source: calls recovered exactly, false calls (a call
run that the model did not make; negatives are prose and code that only mention tools), and
cut-off copies that ran a call. Tuning sources were read while the readers were written;
held-out ones were not. Writes the table into BENCHMARKS.md under "## Repair recovery by
source" (that section only).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.repair.sources import HELD_OUT, WAS_HELD_OUT, Tally, all_cases, measure, total  # noqa: E402

TITLE = "## Repair recovery by source"
NOTES = (
    "How the held-out figures came about (issue 21). First held-out set, named before the structural "
    "readers were written: dynamo, lmdeploy, mistral.rs (and tensorrt-llm, not gathered then); their cases "
    "were gathered from their parser tests after the readers had landed. Cases left out when gathering, "
    "before measuring: tests of streaming internals, tests whose expected value is a parser artifact, tests "
    "whose expected arguments break the schema the test declares (sources/README.md says which). First "
    "measurement: 77/85 (90.6%), 0 false calls, but 3 cut-off copies of lmdeploy's unwrapped GLM key/value "
    "payloads ran a partial call; the safety fix (key/value pairs with no wrapper and nothing after them, or "
    "followed by a pair begun, are not a whole call) only lowered recovery: 74/85 (87.1%; per source in the "
    "role column). Then their misses were read and fixed (XML entities in a value, a comma list for an "
    "array, a nullable string's null, a type JSON Schema does not have, a </function> dropped before "
    "</tool_call>), so those three are tuning sources now, and a second held-out set was named before that "
    "work began: vllm-mlx, mlx-lm, tensorrt-llm. Second set, gathered after the fixes had landed and "
    "measured once: vllm-mlx 84/87, mlx-lm 33/36 (117/123, 95.1%), 0 false calls, 1 wrong-argument call "
    "(a Qwen3-Coder value's last newline dropped), 0 cut-off copies run. Then set 2's misses were read "
    "and fixed (key/value pairs under a family prefix, LongCat's; a pythonic call whose one argument is a "
    "JSON object; Functionary v3's <|recipient|>; a Qwen3-Coder value's own last newline), so set 2 is "
    "tuning too, and tensorrt-llm (set 3) was named held out before that work began. Set 3, gathered "
    "after those fixes had landed and measured once: 89/96 (92.7%), 0 false calls, 1 wrong-argument call "
    "(a GLM value holding a literal </tool_call> cut at it), 5 malformed outputs repaired that TensorRT-LLM "
    "refuses, 0 cut-off copies run. "
    "Set 4, named 2026-12-03 17:33 UTC before set 3's misses were read and before any of its tests was opened: xLLM (jd-opensource/xllm `tests/function_call/*_detector_test.cpp` at 87e8d6ed619bfbf96c467d2465392abe16b58576) and LocalAI (mudler/LocalAI `pkg/functions/parse_test.go`, `parse_glm_9722_test.go`, `parse_lfm2_test.go`, `peg_integration_test.go` at 82c191afadf5f005281e798ccfa0ffd0d5805030); to be gathered after set 3's fixes land and measured once. "
    "Set 4 (xllm, localai), gathered after set 3's fixes were committed and measured once: xllm 46/74, localai 58/66 (104/140, 74.3%), 0 false calls, 28 wrong-argument calls (mostly arguments the tool's schema does not declare, dropped by the repair's rule that a schema with properties and no additionalProperties takes no others), 1 malformed output repaired, 0 cut-off copies run. Reading the misses found 5 errors of the gathering, not of the readers (4 asserted nested values merged shallowly over the text's, dropping keys the text holds; 1 expected null for a string parameter, which the earlier sets' rule leaves out); with the data corrected and the readers unchanged: 105/139 (75.5%). Set 5, named 2026-12-03 17:50 UTC after set 4's misses were read and before any fix for them began, not gathered yet: Ollama `model/parsers/*_test.go` at fb30760996871fa9460115c753afd2c60d4ab0f7 except gemma4_test.go and olmo3_test.go (the files the corpus already holds). "
    "Then set 4's misses were read and fixed (an indented block value loses its layout; whitespace around a one-line key/value value is layout): xllm 49/73, localai 62/66, tuning now, so no source is held out now; 21 of xllm's 24 misses left are arguments its tools' schemas do not declare, which the repair drops on purpose (agentrun's own tools fail on them). Set 5 is to be gathered and measured once before any claim of a held-out figure after these fixes. "
    "Then the rule itself was reconsidered: JSON Schema allows properties a schema does not declare unless it says additionalProperties: false, so the repair keeps them unless the schema says so (agentrun's own tools do, from pydantic's extra=forbid); every source measured: xllm 49/73 -> 65/73, no other source changed, 0 false calls. "
    "Set 6, named 2026-12-03 23:03 UTC by the gatherer from file lists and test names only, before set 5 was measured: LLaMA-Factory (hiyouga/LLaMA-Factory `tests/data/test_formatter.py` at ff6d4d12eeb035d6ce06805a5733dd7b29f2ac30, the tool-extractor tests), transformers (huggingface/transformers `tests/utils/test_chat_parsing_utils.py` at 054181614fa7e9000e5f18f6af5e1c1b169ce52e) and Qwen-Agent (QwenLM/Qwen-Agent `tests/llm/test_nous_fncall_prompt.py` at 108590fb9641b31090963ffc80c57840143f1da0); not gathered on main, not opened by the fixer. "
    "Set 5 (ollama-parsers: 374 cases, 218 with calls, 156 without, from Ollama `model/parsers/*_test.go` at fb30760 except gemma4 and olmo3), gathered after the additionalProperties change landed and measured once with the readers unchanged (2026-12-03 23:09 UTC, load 1.5): 170/218 (78.0%), 3 false calls (glimmer's two calls quoted in prose, leading and trailing; ministral's call to a tool not offered), 0 wrong-argument calls, 2 outputs its tests call malformed that keep their well-formed siblings' calls (cohere), 0 cut-off copies run. Per test file: cogito 5/11, cohere 3/3, deepseek3 11/17, functiongemma 15/15, glimmer 14/20, glm46 0/26, glm47 4/5, laguna 13/16, lfm2 44/44, ministral 21/21, nemotron3nano 6/6, qwen35 3/3, qwen38 1/1, qwen3 6/6, qwen3coder 9/9, qwen3vl 15/15. Its misses are read from here on, so it is a tuning source now. "
    "Then set 5's misses were read and fixed as shapes (a message addressed to the user with prose beside a call is content; a closest-name match only as a typo would be; a DeepSeek body marked by its separator token alone; a <tool_call> name line with JSON arguments; special tokens inside a tool name): 187/218, 0 false calls, no other source changed. What it still misses: 27 GLM key/value bodies with no wrapper and nothing after them (GLM-4.6 and 4.7 helper tests, and two never closed), refused because a reply cut off after a whole pair looks exactly the same; a namespaced self-reference (read.read for read), a Glimmer invoke whose closing quote became <|message|>, and a Laguna alias (read_file for the offered read). Set 6 is the held-out set now. Set 6 (llamafactory 14 cases, transformers 9, qwen-agent 3), gathered by a helper who did not open the readers or measure, and measured once by the coordinator with the readers unchanged since set 6 was named (2026-12-03 23:18 UTC, load 1.5-2.5): 20/22 (90.9%), 0 false calls, 0 wrong-argument calls, 0 cut-off copies run (llamafactory 11/13: its default extractor's Action: / Action Input: text is not read; transformers 6/6; qwen-agent 3/3); still held out, not read. "
    "Speed after set 5's fixes (measured 2026-12-03 23:17 UTC, load average 5.3-6.1, six runs alternating with "
    "the tree before issue 21, b5dd5c2, on the same 355-message corpus, `bench/repair_throughput.py --rounds 10`): "
    "median 0.179-0.237 ms per message against 0.122-0.197 ms (per pair 0.97-1.72x, the median pair 1.2x; the "
    "1.72x pair ran as the load rose to 6); a 45 KB reply with no call in it 1.05-1.14 ms against 4.20-4.71 ms: the "
    "readers test their marker with `in` before their regex runs. "
    "2026-12-07: set 6's two misses were read after set 7 was named (ReAct's Action: / Action Input:, read as a "
    "shape: structural/labelled.py), and each later set was named before the previous one's misses were read, "
    "gathered by a helper that did not open the readers (nor any measurement), and measured once by the "
    "coordinator with the readers frozen at the commit the table below names; its misses were then read and "
    "fixed as shapes (tests/unit/repair/test_set7_shapes.py .. test_set10_shapes.py). The blind figures, in the "
    "order they were measured, are in the table of sets below: engines' and servers' parser tests (sets 1-7, "
    "10) land at 75-95% blind, agents' own text conventions (sets 8, 9: ReAct variants, one-text inputs, "
    "editor tool formats) lower; 0 cut-off copies ran in any set but set 8 (one, fixed since), 2 false calls in "
    "set 9 were gathering errors (a parser that reads calls only at the start of the output). "
    "Sets 11-18 (2026-12-07, same discipline; shapes in test_set11_shapes.py .. test_set17_shapes.py): "
    "agent frameworks' own call conventions (sets 11, 13, 14: griptape, Langroid, gptme, AutoGPT, "
    "mini-swe-agent) land at 29-57% blind, each its own convention; engines' parser tests the corpus did "
    "not hold land at 61-94% (sets 12, 15-18), lowest where a family's envelope is new (GigaChat 3.5's "
    "GCML, Solar Open 2's and PLaMo 3's colon tokens, HY's namespaced tags, iQuest's and K2 Horizon's "
    "prefixes), highest on llama.cpp's and SGLang's own tests (73/74, 10/10 in set 18). Set 16's 2 false "
    "calls came from set 14's rule that a reply's one ```bash block is a shell-only agent's call (vLLM's "
    "RWKV tests keep such a block as content): narrowed to a fence tagged as a command since; set 17's "
    "false call from a call element holding only a name inside a wrapper never closed, fixed since; six "
    "set 17 misses were gathering errors (calls without a required argument), removed. Sets 18 and 19 "
    "(llama.cpp's test-chat texts, whole and partial; vLLM's and SGLang's remaining parser tests): "
    "171/185 (92.4%) blind, 0 false calls. Sets 20-28 (2026-12-07 12:15-13:25 UTC, same discipline, two "
    "gatherers per set; shapes in test_set18_19_shapes.py .. test_set27_shapes.py): a test that expects "
    "a call its own request refuses (a tool it does not declare, arguments its schema rejects, an empty "
    "name) is a negative with the test's expectation kept (engine_expected); a tool-call middleware's "
    "and RL frameworks' conventions (sets 21, 22: YAML bodies, salvage of broken XML) land at 56-58% "
    "blind, engines' parser tests at 80-95% and rising set by set (set 22's engine files 67/75, set 23's "
    "60/70, set 24 52/65, set 25 144/156, set 26 97/102), with 0 false calls in sets 24-27 and 0 cut-off "
    "copies run in every set since 20. Where the misses are choices (a quote between filler words, a "
    "value's layout engines disagree on, arguments a validating repair refuses) they stay. The issue's "
    "goal of 98% held out was not met on any set. "
    "Sets 28-32 (2026-12-07 15:35 UTC on, same discipline; shapes in test_set28_shapes.py .. "
    "test_set31_shapes.py): engines' tests the corpus did not hold land at 92-96% blind (set 29 107/112, set "
    "30's engine files 40/41), agents' own conventions lower (goose's emulated shell, set 31). Reading set "
    "30 moved one rule: twelve projects' tests (the AI SDK middleware, SGLang, mistral.rs, xinference, "
    "slime, sgl-router, dynamo, kilocode, openvino.genai ...) run a call set between plain filler words "
    "(before <tool_call>..</tool_call> after), 38 positives the quote rule had refused; a call in a sentence "
    "is now a quote only when the sentence talks about the syntax (what a model could or would write, a "
    "format, an example, use ..), which keeps every real and hand-written negative (0 false calls). "
    "Sets 32-35 came mostly from SGLang's unit function-call tests, which pin each detector's exact "
    "value typing: 77-83% blind, with 1-5 false calls each (calls shown after Example: in a fence, a call "
    "block a thought weighs, a header quoted into an answer; fixed after reading) and 17-34 wrong "
    "arguments each, most of them choices where engines disagree (an undeclared value's type, padding "
    "around a one-line value, a JSON-quoted string where a string is due, XML entities). Set 36 (the "
    "last SGLang unit files, dynamo's Kimi K2 tests): 21/24 (87.5%) blind, 1 false call (a Kimi K2 call "
    "under a client id named by the one tool its arguments fit, whose schema has a $ref to nothing); "
    "23/24 since, 0 false. Set 37, a new kind of source (the model makers' own documents and notebooks: "
    "MiniMax, Qwen2.5, Hermes, InternLM, NexusRaven; tabbyAPI's parser tests, the one front end of eleven "
    "with tests reading calls out of text): 43/51 (84.3%) blind, 0 false calls, 0 wrong; 50/51 since. Set "
    "38 (more model makers' notebooks and READMEs: Gemma, Hunyuan, ChatGLM3, GLM-4, Mistral, MiniCPM; "
    "training and evaluation code: open-instruct, tau2-bench, evalscope, BFCL): 35/45 (77.8%) blind, 0 "
    "false calls, 0 wrong; 40/45 since. Set 39 (agent applications: avante.nvim, Letta, codecompanion.nvim, "
    "SuperAGI; serving projects: node-llama-cpp's chat wrappers, web-llm): 29/40 (72.5%) blind, 0 false "
    "calls, 2 wrong; 31/40 since. Set 40, the formats models are trained to write (38 chat templates "
    "rendered with one call, two calls, and words before a call) and raw replies pasted into 23 GitHub "
    "issues: 114/117 (97.4%) blind, 0 false calls, 1 wrong; 117/117 since. Set 41 (16 more template "
    "families from other projects' copies; 20 more issue threads): 51/59 (86.4%) blind, 0 false calls; "
    "56/59 since. Set 42 (nine more template families read one file at a time; 22 more issue threads): "
    "42/44 (95.5%) blind, 0 false calls; 44/44 since. Set 43 (Functionary, firefunction, Qwen3-Next, "
    "Qwen3.5, Mistral, Nemotron, Granite and Hermes templates; 16 more threads): 43/44 (97.7%) blind, 0 "
    "false calls; 44/44 since. Set 44 (Command R/A, Jamba, firefunction-v1 and EXAONE 4 templates; about 22 "
    "more threads): 32/37 (86.5%) blind, 0 false calls, 2 wrong; 36/37 since. Set 45 (raw replies in "
    "engines', agents' and clients' trackers; most threads found were in the corpus already): 15/18 "
    "(83.3%) blind, 0 false calls; 17/18 since (a null for an optional string dropped). Set 46 (the local model's raw replies: Qwen2.5-Coder-1.5B "
    "on llama-server over 54 prompts that offer tools at three temperatures, read from /completion "
    "without the server's tool-call parsing; five more threads): 93/96 (96.9%) blind, 0 false calls, 2 "
    "wrong; 94/96 since (the 2 left are nulls for an optional integer, dropped as everywhere; a list of two "
    "cities is no longer joined into one). Set 47 (the local model under opencode's and mini-swe-agent's recorded requests "
    "and agentrun's own tools, turns added mid-task; five more pages): 36/37 (97.3%) blind, 0 false "
    "calls, 0 wrong; 37/37 since. Set 48 (the local model under qwen-code's whole 14.8k-token prompt and "
    "agentrun's own, tasks continued after tool results: it mostly did not call; six more pages): 16/16 "
    "(100%) blind over 36 negatives, 0 false calls, 0 wrong: the issue's goal on a held-out set, a small "
    "one. Set 49 (the local model over 60 requests that need a tool, at three temperatures; ToolACE, OLMo "
    "3, InternLM2, Hunyuan A13B, Seed-OSS, LFM2.5, GLM-4.6 and Apriel 1.6 templates rendered with a call): "
    "120/125 (96.0%) blind, 0 false calls, 1 wrong; 122/125 since (ToolACE's unquoted values). Set 50 (Bielik's, Gemma 4's and "
    "MiniMax-M2's templates rendered with a call; the local model's part not gathered): 9/9 blind; held "
    "out. Over sets 46-50 (283 calls) 274 blind (96.8%); over sets 37-50 (738 calls), 678 blind (91.9%); "
    "over sets 40-50, the formats models are trained to write, raw replies pasted in trackers and the "
    "local model's (602 calls), 571 blind "
    "(94.9%; the rendered templates alone 231/238, 97.1%), 0 false calls in any. The "
    "issue's goal of 98% held out with no false call was met blind on one set, set 48 (16/16, 36 negatives), "
    "and on set 50 (9/9, no negatives), not on set 49 (96.0%) nor on sets 46-50 taken together (96.8%)."
)

BLIND_SETS = (
    ("set 1", "dynamo, lmdeploy, mistral.rs", "before the structural readers", "74/85", "87.1%", "0"),
    ("set 2", "vllm-mlx, mlx-lm", "2026-12-03", "117/123", "95.1%", "0"),
    ("set 3", "tensorrt-llm", "2026-12-03", "89/96", "92.7%", "0"),
    ("set 4", "xllm, localai", "2026-12-03 17:49", "104/140", "74.3%", "0"),
    ("set 5", "ollama-parsers", "2026-12-03 23:09", "170/218", "78.0%", "3"),
    ("set 6", "llamafactory, transformers, qwen-agent", "2026-12-03 23:18", "20/22", "90.9%", "0"),
    (
        "set 7",
        "litellm, tgi, ms-swift, llama-stack, xinference",
        "2026-12-07 06:17, 2a91d01",
        "75/85",
        "88.2%",
        "0",
    ),
    (
        "set 8",
        "langchain, llama-index, smolagents, harmony, roo-code, goose",
        "2026-12-07 06:31, a9ced6c",
        "49/77",
        "63.6%",
        "0",
    ),
    (
        "set 9",
        "openhands, swe-agent, crewai, continue, ovms, camel, haystack",
        "2026-12-07 06:38, 36e3e01",
        "104/136",
        "76.5%",
        "2",
    ),
    ("set 10", "sgl-router, exo, ms-agent, lagent", "2026-12-07 06:47, 7ea170e", "211/243", "86.8%", "0"),
    (
        "set 11",
        "vllm-ascend, autogen, dspy, griptape",
        "2026-12-07 06:52, 28be330",
        "13/23",
        "56.5%",
        "0",
    ),
    (
        "set 12",
        "fastdeploy, aphrodite, dify, langchainjs, agentscope, sglang-jax",
        "2026-12-07 09:20, 71c7fd5",
        "84/89",
        "94.4%",
        "0",
    ),
    (
        "set 13",
        "aphrodite-units, langroid, autogpt, gptme, ik-llama",
        "2026-12-07 09:26, 3aa8627",
        "21/65",
        "32.3%",
        "0",
    ),
    (
        "set 14",
        "mini-swe-agent, metagpt, agent-zero, adk-python",
        "2026-12-07 09:31, 1b8cbc7",
        "9/31",
        "29.0%",
        "0",
    ),
    (
        "set 15",
        "ollama-new, vllm-new, sglang-new, tensorrt-llm-new, lmdeploy-new",
        "2026-12-07 09:35, d8b180c",
        "51/72",
        "70.8%",
        "0",
    ),
    ("set 16", "vllm-new2, sglang-new2", "2026-12-07 09:39, f4ceeb9", "43/70", "61.4%", "2"),
    ("set 17", "vllm-new3, sglang-new3", "2026-12-07 09:43, d1a51e8", "73/81", "90.1%", "1"),
    (
        "set 18",
        "llama.cpp-new, vllm-new4, sglang-new4",
        "2026-12-07 09:46, de5dee1",
        "88/99",
        "88.9%",
        "0",
    ),
    (
        "set 19",
        "llama.cpp-partial, vllm-new5, sglang-new5",
        "2026-12-07 10:06, 0cdbe84",
        "83/86",
        "96.5%",
        "0",
    ),
    (
        "set 20",
        "llama.cpp-peg, vllm-new6, sglang-new6 (20 calls their request refuses counted as negatives)",
        "2026-12-07 12:20, 37611a1",
        "148/162",
        "91.4%",
        "1",
    ),
    (
        "set 21",
        "ai-sdk-tool-parser, verl, areal, skyrl, verifiers, atropos (2 gathering errors removed)",
        "2026-12-07 12:28, 0c4c053",
        "46/79",
        "58.2%",
        "0",
    ),
    (
        "set 22",
        "vllm-new7, sglang-new7, ai-sdk-tool-parser2, rllm, slime, roll (engines' own files 67/75)",
        "2026-12-07 12:35, ba835db",
        "121/216",
        "56.0%",
        "6",
    ),
    (
        "set 23",
        "mistral.rs-new, localai-new, xllm-new, mlx-lm-new, vllm-mlx-new, ai-sdk-tool-parser3 (engines 60/70)",
        "2026-12-07 12:40, 0845a3d",
        "170/244",
        "69.7%",
        "1",
    ),
    (
        "set 24",
        "sglang-new8, sgl-router-new, vllm-mlx-new2, lmdeploy-new2",
        "2026-12-07 12:45, 8c0c77e",
        "52/65",
        "80.0%",
        "0",
    ),
    (
        "set 25",
        "dynamo-fixtures, localai-new2, ollama-new2, sgl-router-new2, vllm-mlx-new3",
        "2026-12-07 13:11, 4116618",
        "144/156",
        "92.3%",
        "0",
    ),
    (
        "set 26",
        "dynamo-units, localai-new3, ollama-new3, vllm-new8",
        "2026-12-07 13:16, 5307352",
        "97/102",
        "95.1%",
        "0",
    ),
    (
        "set 27",
        "transformers-new, vllm-ascend-new, xinference-new",
        "2026-12-07 13:21, e3900d8",
        "35/50",
        "70.0%",
        "0",
    ),
    (
        "set 28",
        "dynamo-rest, vllm-new9, llama-stack-new, harmony-new, ai-sdk-tool-parser4 (engines 165/170)",
        "2026-12-07 13:25, 5465822",
        "181/216",
        "83.8%",
        "0",
    ),
    (
        "set 29",
        "deepseek-encoding, functionary, litellm-new, max-serve, rtp-llm, trl",
        "2026-12-07 15:40, fb5f82c",
        "107/112",
        "95.5%",
        "0",
    ),
    (
        "set 30",
        "kilocode, llama-models, nemo, openvino-genai, rtp-llm-2 (engines 40/41)",
        "2026-12-07 15:44, 462cba4",
        "47/51",
        "92.2%",
        "0",
    ),
    (
        "set 31",
        "goose-new, mlx-vlm, ollama-new4, rtp-llm-3, sglang-new9 (engines 16/22)",
        "2026-12-07 15:49, cac1122",
        "21/39",
        "53.8%",
        "0",
    ),
    (
        "set 32",
        "goose-new2, mlx-vlm-2, open-interpreter, sglang-new10, vllm-new10",
        "2026-12-07 15:57, 4587dff",
        "104/125",
        "83.2%",
        "5",
    ),
    (
        "set 33",
        "sglang-units, sglang-units2 (SGLang's unit function-call tests)",
        "2026-12-07 16:02, 9494541",
        "202/263",
        "76.8%",
        "5",
    ),
    (
        "set 34",
        "localai-new4, mistral.rs-new2, sglang-units3",
        "2026-12-07 16:06, 3009d44",
        "83/104",
        "79.8%",
        "3",
    ),
    (
        "set 35",
        "dynamo-new3, sglang-units4, tensorrt-llm-new3",
        "2026-12-07 16:11, c1f8436",
        "104/126",
        "82.5%",
        "1",
    ),
    (
        "set 36",
        "dynamo-new4, sglang-units5",
        "2026-12-07 16:19, 9ac5115",
        "21/24",
        "87.5%",
        "1",
    ),
    (
        "set 37",
        "model-vendors, ui-servers (model makers' documents, tabbyAPI's tests)",
        "2026-12-07 18:48, d01d2e9",
        "43/51",
        "84.3%",
        "0",
    ),
    (
        "set 38",
        "model-vendors2, train-eval (Gemma cookbook, Hunyuan, ChatGLM3, Mistral; open-instruct, tau2-bench)",
        "2026-12-07 18:52, d0f7ede",
        "35/45",
        "77.8%",
        "0",
    ),
    (
        "set 39",
        "agent-apps, engines-misc (avante.nvim, Letta, codecompanion.nvim; node-llama-cpp, web-llm)",
        "2026-12-07 18:58, 0364951",
        "29/40",
        "72.5%",
        "0",
    ),
    (
        "set 40",
        "chat-templates, web-pages (38 models' chat templates rendered with a call; 23 issues showing raw replies)",
        "2026-12-07 19:02, 9a12451",
        "114/117",
        "97.4%",
        "0",
    ),
    (
        "set 41",
        "chat-templates2, web-pages2 (16 more template families; 20 more issue threads)",
        "2026-12-07 19:07, 2a4f8bb",
        "51/59",
        "86.4%",
        "0",
    ),
    (
        "set 42",
        "chat-templates3, web-pages3 (nine more template families; 22 more issue threads)",
        "2026-12-07 19:13, 005589c",
        "42/44",
        "95.5%",
        "0",
    ),
    (
        "set 43",
        "chat-templates4, web-pages4 (Functionary, firefunction, Qwen3-Next, Mistral, Granite, Hermes; 16 threads)",
        "2026-12-07 19:20, 6267353",
        "43/44",
        "97.7%",
        "0",
    ),
    (
        "set 44",
        "chat-templates5, web-pages5 (Command R/A, Jamba, firefunction-v1, EXAONE 4; about 22 threads)",
        "2026-12-07 19:24, 973c8bc",
        "32/37",
        "86.5%",
        "0",
    ),
    (
        "set 45",
        "web-pages6, web-pages7 (engines', agents' and clients' trackers)",
        "2026-12-07 19:28, 5f7affe",
        "15/18",
        "83.3%",
        "0",
    ),
    (
        "set 46",
        "local-model, web-pages8 (the local model's raw replies, 122; five threads)",
        "2026-12-07 22:20, 458de41",
        "93/96",
        "96.9%",
        "0",
    ),
    (
        "set 47",
        "local-model2, web-pages9 (the local model under opencode's, mini-swe-agent's and agentrun's requests; five pages)",
        "2026-12-07 22:38, d8cea2d",
        "36/37",
        "97.3%",
        "0",
    ),
    (
        "set 48",
        "local-model3, web-pages10 (the local model under qwen-code's whole prompt and agentrun's own; six pages)",
        "2026-12-07 23:01, 95b97e7",
        "16/16",
        "100.0%",
        "0",
    ),
    (
        "set 49",
        "local-model4, chat-templates6 (the local model over 60 requests that need a tool; 8 templates)",
        "2026-12-07 23:16, e21393c",
        "120/125",
        "96.0%",
        "0",
    ),
    (
        "set 50 (not read)",
        "chat-templates7 (Bielik, Gemma 4, MiniMax-M2 templates rendered with a call)",
        "2026-12-07 23:25, d890ab0",
        "9/9",
        "100.0%",
        "0",
    ),
)
"""Each held-out set's one blind measurement: sources, when (and the readers' commit), recovered, false calls."""


def _row(name: str, t: Tally, held: bool) -> str:
    rate = f"{100 * t.recovered / t.positives:.1f}%" if t.positives else "-"
    missed = ", ".join(t.missed[:6]) + (" ..." if len(t.missed) > 6 else "")
    if held and t.missed:  # naming a held-out miss would show the fixer what to read
        missed = f"({len(t.missed)} not named: held out)"
    role = "**held out**" if held else "tuning"
    if name in WAS_HELD_OUT:
        role = f"tuning (held out first: {WAS_HELD_OUT[name]})"
    return (
        f"| {name} | {role} | {t.recovered}/{t.positives} | {rate} | {t.negatives} | "
        f"{len(t.false_calls)} | {len(t.wrong_args)} | {len(t.repaired)} | {len(t.cut_ran)} | {missed} |"
    )


def _held_out_names(tallies: dict[str, Tally]) -> str:
    measured = [s for s in HELD_OUT if s in tallies]
    named = [s for s in HELD_OUT if s not in tallies]
    out = ", ".join(measured) or "none measured now: every set measured so far has been read since"
    return out + (f"; named, not gathered yet: {', '.join(named)}" if named else "")


def render(tallies: dict[str, Tally], seconds: float) -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        TITLE,
        "",
        f"Measured {dt.date.today().isoformat()} by `python bench/repair_recovery.py` on {platform.machine()}, "
        f"{os.cpu_count()} CPUs shared with other work (load average {load}), Python "
        f"{platform.python_version()}, {seconds:.1f} s. Recovered: the calls come out exactly (names, "
        "arguments, order). False calls: cases where a call ran to a tool the model did not call (any call "
        "from a negative: prose and code that only mention tools, cut-off calls). Wrong arguments: a call the "
        "model made, run with arguments other than the test expects. Repaired malformed: a call run from an "
        "output the source's test calls malformed and its own parser refuses (a typo in a tag, Python quotes, "
        "ASCII bars for DeepSeek's full-width ones); the repair reads those on purpose. Cut-off ran: copies cut inside the last call that ran a "
        "call (with `finish_reason=length`) or one the whole text does not hold. **Held out** "
        f"({_held_out_names(tallies)}): sources "
        "whose tests were not read while the readers were written or tuned; measured, never tuned on.",
        "",
        NOTES,
        "",
        "| held-out set | sources | measured (readers) | recovered blind | rate | false calls |",
        "|---|---|---|---:|---:|---:|",
        *(
            f"| {n} | {src} | {when} | {got} | {rate} | {false} |"
            for n, src, when, got, rate, false in BLIND_SETS
        ),
        "",
        "| source | role | recovered | rate | negatives | false calls | wrong arguments | repaired malformed | "
        "cut-off ran | missed |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    held = {s: t for s, t in tallies.items() if s in HELD_OUT}
    tuning = {s: t for s, t in tallies.items() if s not in HELD_OUT}
    for name in sorted(tuning):
        lines.append(_row(name, tuning[name], False))
    for name in sorted(held):
        lines.append(_row(name, held[name], True))
    lines.append(_row("**all tuning**", total(list(tuning.values())), False))
    if held:
        lines.append(_row("**all held out**", total(list(held.values())), True))
    return "\n".join(lines) + "\n"


def write_section(section: str) -> None:
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    start = text.find(f"\n{TITLE}\n")
    if start >= 0:
        end = text.find("\n## ", start + 1)
        text = text[: start + 1] + section + (text[end:] if end >= 0 else "")
    else:
        at = text.find("\n## ", text.find("\n## Repair\n") + 1)
        text = text[: at + 1] + section + text[at:] if at >= 0 else text.rstrip("\n") + "\n\n" + section
    path.write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    t0 = time.perf_counter()
    tallies = measure(all_cases())
    section = render(tallies, time.perf_counter() - t0)
    print(section)
    if not args.no_write:
        write_section(section)


if __name__ == "__main__":
    main()
