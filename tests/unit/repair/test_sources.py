"""Recovery per source of model output (tests/fixtures/repair/sources.py): every tuning source
recovers its calls, no source ever runs a call the model did not make, and no cut-off copy of
a call runs."""

from __future__ import annotations

import re

import pytest

from tests.fixtures.repair.sources import (
    HELD_OUT,
    HELD_OUT_SETS,
    WAS_HELD_OUT,
    Case,
    Tally,
    all_cases,
    gathered_cases,
    measure,
    total,
)


def held_set(tallies: dict[str, Tally], name: str) -> Tally:
    """One held-out set's sources counted as one (those gathered: set 50's local-model part was not)."""
    return total(tallies[source] for source in HELD_OUT_SETS[name] if source in tallies)


@pytest.fixture(scope="module")
def tallies() -> dict[str, Tally]:
    return measure(all_cases())


def test_every_case_names_its_source(tallies: dict[str, Tally]) -> None:
    assert {"vllm", "sglang", "llama.cpp", "ollama", "agentrun-rendered", "agentrun-handwritten"} <= set(
        tallies
    )
    assert sum(t.positives for t in tallies.values()) >= 400
    assert sum(t.negatives for t in tallies.values()) >= 60


def test_gathered_cases_record_repo_path_and_commit() -> None:
    import json

    from tests.fixtures.repair.sources import HERE

    for path in (HERE / "sources").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028 in a text
            if not line.strip():
                continue
            origin = json.loads(line)["origin"]
            assert origin["repo"] and origin["path"], path.name
            assert re.fullmatch(r"[0-9a-f]{40}", origin["commit"]), (path.name, origin)
    assert all(c.source == c.source.lower() for c in gathered_cases())


def test_tuning_sources_recover_their_calls(tallies: dict[str, Tally]) -> None:
    for source, t in tallies.items():
        if source in HELD_OUT or source in WAS_HELD_OUT or not t.positives:
            continue  # the first held-out sources have their own test
        assert t.recovered / t.positives >= 0.98, (source, t.missed)


def test_sources_held_out_until_measured_recover_their_calls(tallies: dict[str, Tally]) -> None:
    """Sets 1-3 (dynamo, lmdeploy, mistral.rs: 74/85 when measured; vllm-mlx, mlx-lm: 117/123;
    tensorrt-llm: 89/96), tuning since, at 98%. What they still miss: GLM pairs whose end never came
    (never run), one envelope quoted mid-sentence."""
    was = [tallies[s] for name in ("set 1", "set 2", "set 3") for s in HELD_OUT_SETS[name]]
    positives = sum(t.positives for t in was)
    assert positives >= 300 and sum(t.negatives for t in was) >= 90
    assert sum(t.recovered for t in was) / positives >= 0.98


def test_set_4_recovers_at_least_its_blind_figure(tallies: dict[str, Tally]) -> None:
    """Set 4 (xllm, localai), measured once held out: 105/139 (75.5%; 104/140 before 5 gathering errors
    were corrected), 0 false calls; its misses were fixed since (111/139), and arguments its tools'
    schemas do not declare are kept since (JSON Schema's default; 127/139)."""
    held = held_set(tallies, "set 4")
    positives = held.positives
    assert positives >= 130 and held.negatives >= 70
    assert not held.false_calls
    assert held.recovered / positives >= 0.755


def test_the_last_measured_set_recovers_at_least_its_blind_figure(tallies: dict[str, Tally]) -> None:
    """Set 5 (ollama-parsers: Ollama's parser tests but gemma4 and olmo3), measured once held out, the
    readers unchanged since it was gathered: 170/218 (78.0%), 3 false calls (two Glimmer calls quoted
    in prose, a Ministral call to a tool its request did not offer, which its test expects refused),
    0 wrong arguments, 0 cut-off copies run. Its misses were read and fixed since (tuning now):
    187/218 and no false call. Most of what it still misses are key/value bodies with no wrapper and
    nothing after them (GLM-4.6's helper tests), which a cut-off reply looks exactly like, so they are
    refused. The issue's goal is 98% on held-out sources; this set met 78.0% blind."""
    (t,) = [tallies[s] for s in HELD_OUT_SETS["set 5"]]
    assert t.positives >= 210 and t.negatives >= 150
    assert not t.false_calls and not t.cut_ran
    assert t.recovered / t.positives >= 187 / 218


def test_set_6_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 6 (LLaMA-Factory's tool extractors, transformers' response parsing, Qwen-Agent's Nous
    prompt), named before set 5 was measured, gathered by a helper who did not read the readers, and
    measured once by the coordinator with the readers unchanged since (2026-12-03 23:18 UTC): 20/22
    (90.9%), 0 false calls, 0 wrong arguments, 0 cut-off copies run; llamafactory 11/13, transformers
    6/6, qwen-agent 3/3. Its two misses (LLaMA-Factory's default ReAct template, ``Action:`` /
    ``Action Input:``) were read on 2026-12-07 after set 7 was named, and read since as a shape
    (``structural/labelled.py``): tuning now."""
    held = held_set(tallies, "set 6")
    positives = held.positives
    assert positives >= 22 and held.negatives >= 4
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered == positives


def test_set_7_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 7 (Xinference's tool-parser tests, llama-stack's and llama-models' tool_utils, LiteLLM's
    XML parameters, TGI's grammar, ms-swift's agent templates), named before set 6's misses were read,
    gathered by a helper who did not read the readers, measured once by the coordinator with the
    readers as of 2a91d01 (2026-12-07 06:17 UTC): 75/85 (88.2%), 0 false calls, 3 wrong-argument calls
    (values written as XML elements, a parameter written twice), 0 cut-off copies run. Its misses were
    read after set 8 was named and fixed as shapes (test_set7_shapes.py): 83/85. The two it still
    misses are a one-line call block between words ("Before <tool_call>..</tool_call> after"), which
    the rule for calls quoted in a sentence refuses on purpose."""
    held = held_set(tallies, "set 7")
    positives = held.positives
    assert positives >= 85 and held.negatives >= 50
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 83


def test_set_8_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 8 (agent frameworks' own parsers: LangChain, LlamaIndex, smolagents, harmony, Roo Code, goose),
    measured once with the readers as of a9ced6c: 49/77 (63.6%), 0 false calls, 3 wrong-argument calls, 1
    cut-off copy run (a Roo Code call quoted inside another's value). Read after set 9 was named and fixed
    as shapes (test_set8_shapes.py): a call's input as one text, ReAct's layouts. What it still misses:
    LangChain's self-ask ("Follow up:" for a tool named "Intermediate Answer") and Roo Code's own layout
    of an indented value, which its parser keeps and others dedent."""
    held = held_set(tallies, "set 8")
    positives = held.positives
    assert positives >= 77 and held.negatives >= 40
    assert not (held.false_calls or held.cut_ran)
    assert held.recovered >= 62


def test_set_9_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 9 (OpenHands, SWE-agent, CrewAI, Continue, OpenVINO Model Server, CAMEL, Haystack), measured
    once with the readers as of 36e3e01: 104/136 (76.5%), 2 false calls (two gathering errors, removed
    since: a parser that reads calls only at the start of the output), 10 wrong-argument calls, 0 cut-off
    copies run. Read after set 10 was named and fixed as shapes (test_set9_shapes.py). What it still
    misses: SWE-agent's prompt conventions (a bare command, a code fence, <command>), which any reply
    with code would trip; CrewAI's JSON kept as one string; LFM2.5 strings with unescaped quotes."""
    held = held_set(tallies, "set 9")
    positives = held.positives
    assert positives >= 136 and held.negatives >= 40
    assert not (held.false_calls or held.cut_ran)
    assert held.recovered >= 120


def test_set_10_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 10 (SGLang's model gateway's parser tests, from lightseekorg/smg; exo; ModelScope-Agent;
    lagent), measured once with the readers as of 7ea170e: 211/243 (86.8%), 0 false calls, 16
    wrong-argument calls, 0 cut-off copies run. Read after set 11 was named and fixed as shapes
    (test_set10_shapes.py): an unwrapped key/value body runs when the server said the reply ended, a
    value whose close was dropped ends at the next key, null for a parameter of any type: 228/243. What
    it still gets otherwise: engines disagree on entities and on trimming a value (SGLang keeps
    ``&amp;`` and trims; others unescape and keep spaces)."""
    held = held_set(tallies, "set 10")
    positives = held.positives
    assert positives >= 243 and held.negatives >= 70
    assert not (held.false_calls or held.cut_ran)
    assert held.recovered >= 228


def test_set_11_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 11 (vllm-ascend's parser patches' tests, AutoGen 0.2's manual tool calling, DSPy's chat
    adapter, griptape's Actions), named before set 10's misses were read, gathered by a helper who did
    not read the readers, measured once with the readers as of 28be330 (2026-12-07 06:52 UTC): 13/23
    (56.5%), 0 false calls, 0 wrong arguments, 0 cut-off copies run; vllm-ascend 10/11, autogen 2/2,
    dspy 1/2, griptape 0/8. Read after set 12 was named and fixed as shapes (test_set11_shapes.py): a
    list's close ends the call left open in it, a toolkit's activity named by two keys, a fence closed
    right after its JSON, one undeclared key around the declared arguments: 23/23."""
    held = held_set(tallies, "set 11")
    positives = held.positives
    assert positives >= 23 and held.negatives >= 10
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 23


def test_set_12_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 12 (FastDeploy's, Aphrodite's and sglang-jax's parser tests, Dify's and LangChain.js's ReAct
    parsers, AgentScope's tagged calls), named before set 11's misses were read, gathered by a helper
    who did not read the readers, measured once with the readers as of 71c7fd5 (2026-12-07 09:20 UTC):
    84/89 (94.4%), 0 false calls, 0 wrong arguments, 0 cut-off copies run; the engines 79/80, the agent
    frameworks' conventions 5/9. Read after set 13 was named and fixed as shapes (test_set12_shapes.py):
    a fenced call block of lines is not a quote however it sits, a fence closes on a line of blanks
    with a carriage return, call keys written with a space, newlines written as escapes between GLM's
    tags: 89/89."""
    held = held_set(tallies, "set 12")
    assert held.positives >= 89 and held.negatives >= 48
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 89


def test_set_13_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 13 (Aphrodite's parser unit tests set 12 did not read, Langroid's tool messages, AutoGPT's
    JSON extraction, gptme's tool uses, ik_llama.cpp's Kimi K2 tests), measured once with the readers as
    of 3aa8627 (2026-12-07 09:26 UTC): 21/65 (32.3%), 0 false calls, 0 wrong arguments, 0 cut-off copies
    run. Read after set 14 was named and fixed as shapes (test_set13_shapes.py): the tool named under
    ``request`` with its fields beside it (JSON and XML), a command inside the agent's reply, a call
    glued to the words around it or opening its own fence on its line, a tool marked by a call id then
    its JSON (``functions.ping:0{..}``, ``@shell(id): {..}``), an invocation's text as a one-input
    tool's input: 60/65. Left: gptme's ``args=`` attribute, Langroid's tool inferred from its fields
    alone and its fence stripped from a value (1 wrong-argument call), a second tool never closed."""
    held = held_set(tallies, "set 13")
    assert held.positives >= 65 and held.negatives >= 29
    assert not (held.false_calls or held.cut_ran)
    assert held.recovered >= 60 and len(held.wrong_args) <= 1


def test_set_14_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 14 (mini-swe-agent's action parsing, MetaGPT's role-zero commands, agent-zero's tool JSON,
    adk-python's Gemma function calls in text), measured once with the readers as of 1b8cbc7
    (2026-12-07 09:31 UTC): 9/31 (29.0%), 0 false calls, 0 wrong arguments, 0 cut-off copies run. Read
    after set 15 was named and fixed as shapes (test_set14_shapes.py): MetaGPT's ``command_name``,
    thoughts beside a call's keys, and the one fenced shell command of a reply when the only tool
    offered is a shell: 30/31, until set 16 (vLLM's RWKV tests, blind) showed that rule running a plain
    ```bash block shown to the user, two false calls; now only a fence tagged as a command
    (```mswea_bash_command) is one, and mini-swe-agent v1's plain ```bash actions are missed: 13/31.
    Left also: a JSON call between spaced words (agent-zero's "prefix {..} trailing noise")."""
    held = held_set(tallies, "set 14")
    assert held.positives >= 31 and held.negatives >= 13
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 13


def test_set_15_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 15 (engines' parser tests the corpus did not hold: Ollama's tools package and GLM-4.7 lite,
    vLLM's GigaChat 3.5 and Solar Open 2, SGLang's MiniCPM4, TensorRT-LLM's Qwen3 trailing content,
    LMDeploy's argument validation), measured once with the readers as of d8b180c (2026-12-07 09:35
    UTC): 51/72 (70.8%), 0 false calls, 0 wrong arguments, 0 cut-off copies run. Read after set 16 was
    named and fixed as shapes (test_set15_shapes.py): a full-width-bar prefix is a namespace
    (``<｜GCML｜invoke>``), GLM's name-then-pairs body spelled in ``<|NAME:start|>`` tokens (Solar Open
    2), an object whose one key is the tool: 69/72. Left: a list never closed, a bare tool name, a
    pair whose end was dropped (never run: each could be a cut)."""
    held = held_set(tallies, "set 15")
    assert held.positives >= 72 and held.negatives >= 19
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 69


def test_set_16_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 16 (vLLM's tool-parser tests of Apertus, CWM, HY v4, Nemotron JSON, openPangu v2, PLaMo 3,
    MiMo V2 Flash, RWKV; SGLang's K2V3, MiniMax M2, multi-format, DeepSeek V3.2, unknown-tool tests),
    measured once with the readers as of f4ceeb9 (2026-12-07 09:39 UTC): 43/70 (61.4%), 2 false calls
    (set 14's shell-block rule on a ```bash block shown to the user), 0 wrong arguments, 0 cut-off
    copies run. Read after set 17 was named and fixed as shapes (test_set16_shapes.py): a tag's
    namespace spelled ``<ifm|tool_call>`` or ``<tool_call:opensource>``, an ``arg_type`` between a key
    and its value, a call element holding only a requested tool's name, PLaMo 3's tree in
    ``<|NS:begin_TAG:NS|>`` tokens, the shell-block rule narrowed to a fence tagged as a command: 65/70,
    no false call. Left: CWM's ``<tool: function>`` body, GPT-OSS headers inside ``<tool_call>``, a
    MiniMax block between spaced words (the quoting rule)."""
    held = held_set(tallies, "set 16")
    assert held.positives >= 70 and held.negatives >= 34
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 65


def test_set_17_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 17 (vLLM's tool-parser tests of dots, GigaChat 3, HY v3, K2 Horizon, HyperCLOVA X, iQuest
    Coder, Kimi K3, LongCat, MiniCPM 5, Step 3.5; SGLang's Kimi K3, GLM-4.7, GPT-OSS, DeepSeek V3.1
    tests), measured once with the readers as of d1a51e8 (2026-12-07 09:43 UTC): 73/87 (83.9%), 1 false
    call, 3 wrong arguments, 0 cut-off copies run; six misses were gathering errors (calls without an
    argument their tool requires), removed: 73/81. Read after set 18 was named and fixed as shapes
    (test_set17_shapes.py): a separator token between a name and its pairs (HY v3), a call element
    holding only a name runs only when its wrapper closed (the false call), JSON written escaped where
    an array is due, a Python-literal object around the declared arguments: 78/81. Left: MiniCPM 5 drops
    arguments its tool does not declare, we keep them (JSON Schema's default; 2 wrong arguments)."""
    held = held_set(tallies, "set 17")
    assert held.positives >= 81 and held.negatives >= 32
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 2
    assert held.recovered >= 78


def test_sets_18_and_19_recover_their_calls_since_their_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 18 (llama.cpp's test-chat and test-chat-parser tests, vLLM's Gemma 4, Granite 4, CWM and
    Hunyuan tests, SGLang's Kimi K2 and parallel-call tests), named before set 17's misses were read,
    measured once with the readers as of de5dee1 (2026-12-07 09:46 UTC): 88/99 (88.9%), 0 false calls,
    0 wrong arguments, 0 cut-off copies run. Set 19 (llama.cpp's test-chat texts parsed there as partial,
    taken whole; vLLM's Poolside, Granite 20B FC, Granite pythonic and Phi-4-mini tests; SGLang's
    Qwen3-Coder cases), named before set 18's misses were read, measured once with the readers as of
    0cdbe84 (10:06 UTC): 83/86 (96.5%), 0 false calls, 1 wrong argument, 1 cut-off copy run. Both read
    2026-12-07 12:20 UTC, after sets 20 and 21 were named, and fixed as shapes (test_set18_19_shapes.py):
    Gemma 4's calls without their start token, Code World Model's ``<tool: ..>`` blocks, the same call
    again after another one runs again, an indented line keeps its layout in an ``<arg_value>``, a
    parameter closed by the next tag, Kimi K2's calls while it thinks, Functionary's python code."""
    for name, positives, negatives in (("set 18", 99, 19), ("set 19", 86, 6)):
        held = held_set(tallies, name)
        assert held.positives >= positives and held.negatives >= negatives
        assert not (held.false_calls or held.cut_ran or held.wrong_args)
        assert held.recovered == held.positives


def test_set_20_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 20 (llama.cpp's PEG and auto-parser tests; vLLM's Solar Open 2, HY v4, Gemma 4 utils, Trinity,
    TNG and RWKV tests; SGLang's GigaChat 3, Kimi K2 and parallel-call tests), named before sets 18 and
    19's misses were read, measured once with the readers as of 37611a1 (2026-12-07 12:20 UTC): 148/182,
    then 148/162 (91.4%) once the 20 calls their own request refuses were made negatives, 1 false call, 6
    wrong arguments, 1 cut-off copy run. Read and fixed as shapes (test_set20_shapes.py). Left: Seed-OSS's
    blank line before a parameter's close (llama.cpp trims it, mistral.rs and our own rendered cases keep
    it), Solar's repeated argument (vLLM keeps the first, we the last), an integer's ``null`` (dropped
    here, kept by vLLM)."""
    held = held_set(tallies, "set 20")
    assert held.positives >= 162 and held.negatives >= 41
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 3
    assert held.recovered >= 159


def test_set_21_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 21 (an AI SDK tool-call middleware's parser tests; SkyRL's, verl's, AReaL's, verifiers' and
    atropos' parsers), named with set 20, measured once with the readers as of 0c4c053 (2026-12-07 12:28
    UTC): 46/79 (58.2%) without two gathering errors, 0 false calls, 4 wrong arguments, 2 cut-off copies
    run. Read after set 22 was named and fixed as shapes (test_set21_shapes.py). Left: the middleware's
    relaxed JSON with comments, calls between filler words ("a <tool_call>..</tool_call> b": a quote
    here), two identical calls back to back (one here), SkyRL's padding kept and its empty query."""
    held = held_set(tallies, "set 21")
    assert held.positives >= 79 and held.negatives >= 6
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 3
    assert held.recovered >= 63


def test_set_22_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 22 (vLLM's and SGLang's test files no set had read, the AI SDK middleware's YAML-XML, Qwen3-Coder
    and Hermes tests, rllm's, slime's and ROLL's parsers), named before set 21's misses were read, measured
    once with the readers as of ba835db (2026-12-07 12:35 UTC): 121/216 (56.0%) with three gathering errors
    changed, 6 false calls (a lone text read as the one required argument of a tool that takes several,
    and two cross-dialect tests since removed), 34 wrong arguments, 0 cut-off copies run. Read and fixed
    as shapes (test_set22_shapes.py). Left: most of the middleware's salvage of malformed Qwen3-Coder
    variants (nameless parameters, alternate openers, wrapperless calls between filler words), values it
    trims that others keep, MiniMax paths vLLM's sanitizer rejoins."""
    held = held_set(tallies, "set 22")
    assert held.positives >= 216 and held.negatives >= 51
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 12
    assert held.recovered >= 167


def test_set_23_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 23 (the newest parser tests of mistral.rs, LocalAI, xllm, mlx-lm and vLLM-MLX; the AI SDK
    middleware's morph-XML, Qwen3-Coder, Hermes and YAML-XML files sets 21 and 22 did not read), named
    before set 22's misses were read, measured once with the readers as of 0845a3d (2026-12-07 12:40
    UTC): 170/244 (69.7%), 1 false call, 9 wrong arguments, 0 cut-off copies run; the engines' own files
    60/70. Read and fixed as shapes (test_set23_shapes.py). Left: the middleware's salvage of broken
    XML (indexed tuple tags, spaces in close tags, unclosed children). Calls between filler words run
    since set 30 (one of them, ``pre <calc><a>1</a><b> 2 </b></calc> post``, with its undeclared values
    kept as text: a wrong argument against the middleware's numbers)."""
    held = held_set(tallies, "set 23")
    assert held.positives >= 244 and held.negatives >= 24
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 6
    assert held.recovered >= 202


def test_set_24_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 24 (SGLang's function-call parser and Kimi K2 detector tests, its router's MiniMax M2 tests,
    vLLM-MLX's harmony, MiniMax, Poolside, Qwen and Step 3.5 tests, LMDeploy's newest), named before set
    23's misses were read, measured once with the readers as of 8c0c77e (2026-12-07 12:45 UTC): 52/65
    (80.0%), 0 false calls, 0 wrong arguments, 0 cut-off copies run; every miss a Kimi K2 call under a
    client-style id. Read and fixed as shapes (test_set24_shapes.py): 65/65."""
    held = held_set(tallies, "set 24")
    assert held.positives >= 65 and held.negatives >= 10
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered == held.positives


def test_set_25_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 25 (dynamo's test fixtures, the sglang router's tool-parser tests, vLLM-MLX's remaining files,
    LocalAI's and Ollama's newest parser tests), named before set 24's misses were read, measured once with
    the readers as of 4116618 (2026-12-07 13:11 UTC): 144/156 (92.3%) with two gathering errors changed, 0
    false calls, 5 wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set25_shapes.py).
    Left: LFM2's escapes Ollama keeps as written (Python reads them), a Gemma 4 value with no close at
    all, harmony names in namespaces other than functions, a Qwen3 XML value's last newline, a call
    between filler words."""
    held = held_set(tallies, "set 25")
    assert held.positives >= 156 and held.negatives >= 19
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 3
    assert held.recovered >= 150


def test_set_26_keeps_its_blind_figure(tallies: dict[str, Tally]) -> None:
    """Set 26 (the unit tests inside dynamo's parser files, LocalAI's parse and PEG blocks set 25 left,
    Ollama's last parser tests, vLLM's older parser test files), named before set 25's misses were read,
    measured once with the readers as of 5307352 (2026-12-07 13:16 UTC): 97/102 (95.1%), 0 false calls,
    2 wrong arguments, 0 cut-off copies run. Its misses were read and left as choices (the sources.py
    note): it keeps its blind figure, no call it should not run, none cut off."""
    held = held_set(tallies, "set 26")
    assert held.positives >= 102 and held.negatives >= 14
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 2
    assert held.recovered >= 97


def test_set_27_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 27 (transformers' response-parsing tests, vLLM-Ascend's tool-parser tests from its release
    branches and unmerged pull requests, xinference's newest tool-parser tests), named before set 26's
    misses were read, measured once with the readers as of e3900d8 (2026-12-07 13:21 UTC): 35/50 (70.0%),
    0 false calls, 1 wrong argument, 0 cut-off copies run; 13 of its 15 misses one format (MiniMax M3's
    separator token before each tag). Read and fixed as shapes (test_set27_shapes.py)."""
    held = held_set(tallies, "set 27")
    assert held.positives >= 50 and held.negatives >= 9
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 1
    assert held.recovered >= 49


def test_set_28_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 28 (the tests in dynamo's parsers.rs and tools.rs, vLLM's older entrypoint tool-parser tests,
    llama-stack's and harmony's newest, the AI SDK middleware's last unread files), named before set 27's
    misses were read, measured once with the readers as of 5465822 (2026-12-07 13:25 UTC): 181/216
    (83.8%), 0 false calls, 3 wrong arguments, 0 cut-off copies run; the engines' own tests 165/170.
    Read and fixed as shapes (test_set28_shapes.py)."""
    held = held_set(tallies, "set 28")
    assert held.positives >= 216 and held.negatives >= 30
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 2
    assert held.recovered >= 213


def test_set_29_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 29 (rtp-llm's GLM, Qwen3-Coder and Hermes parser tests, functionary's prompt-template parsing,
    MAX serve's Llama 3 JSON parser, litellm's text tool-call tests, trl's response parsing and GRPO tool
    tests, DeepSeek's encoding scripts), named before set 28's misses were read, measured once with the
    readers as of fb5f82c (2026-12-07 15:40 UTC): 107/112 (95.5%), 0 false calls, 0 wrong arguments, 0
    cut-off copies run. Read and fixed as shapes (test_set29_shapes.py)."""
    held = held_set(tallies, "set 29")
    assert held.positives >= 112 and held.negatives >= 53
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 112


def test_set_30_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 30 (openvino.genai's tool parsers, llama-models' tool-call extraction, kilocode's Kimi K2
    parser, NeMo RL's tool-call parsing, rtp-llm's other parser tests), named before set 29's misses were
    read, measured once with the readers as of 462cba4 (2026-12-07 15:44 UTC): 47/51 (92.2%), 0 false
    calls, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set30_shapes.py)."""
    held = held_set(tallies, "set 30")
    assert held.positives >= 51 and held.negatives >= 48
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 51


def test_set_31_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 31 (goose's tool shim and local-inference text tool calls, mlx-vlm's tool parsers, Ollama's,
    SGLang's and rtp-llm's newest parser tests), named before set 30's misses were read, measured once
    with the readers as of cac1122 (2026-12-07 15:49 UTC): 21/39 (53.8%), 0 false calls, 0 wrong
    arguments, 0 cut-off copies run. Read and fixed as shapes (test_set31_shapes.py); left: goose's
    ``$ command`` lines, an invalid JSON escape kept as written (one wrong argument)."""
    held = held_set(tallies, "set 31")
    assert held.positives >= 39 and held.negatives >= 31
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 1
    assert held.recovered >= 31


def test_set_32_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 32 (SGLang's unit function-call tests, the vLLM parser tests set 31 did not reach, goose's and
    mlx-vlm's other tests, open-interpreter's hallucination tests), named before set 31's misses were
    read, measured once with the readers as of 4587dff (2026-12-07 15:57 UTC): 104/125 (83.2%), 5 false
    calls, 1 wrong argument, 1 cut-off copy run. Read and fixed as shapes (test_set32_shapes.py): no false
    call and no cut-off copy run since."""
    held = held_set(tallies, "set 32")
    assert held.positives >= 125 and held.negatives >= 85
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 1
    assert held.recovered >= 109


def test_set_33_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 33 (SGLang's ``test/registered/unit/function_call/`` files set 32 did not reach), named before
    set 32's misses were read, measured once with the readers as of 9494541 (2026-12-07 16:02 UTC):
    202/263 (76.8%), 5 false calls, 34 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set33_shapes.py); three tests of strict grammars are ``malformed`` since (notes)."""
    held = held_set(tallies, "set 33")
    assert held.positives >= 260 and held.negatives >= 83
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 23
    assert held.recovered >= 213


def test_set_34_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 34 (SGLang's test_function_call_parser.py and DeepSeek V4 detector tests, mistral.rs' and
    LocalAI's newest), named before set 33's misses were read, measured once with the readers as of
    3009d44 (2026-12-07 16:06 UTC): 83/104 (79.8%), 3 false calls, 17 wrong arguments, 0 cut-off copies
    run. Read and fixed as shapes (test_set34_shapes.py)."""
    held = held_set(tallies, "set 34")
    assert held.positives >= 104 and held.negatives >= 26
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 10
    assert held.recovered >= 94


def test_set_35_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 35 (the SGLang unit function-call files sets 33 and 34 did not reach, TensorRT-LLM's and
    dynamo's newest parser tests), named before set 34's misses were read, measured once with the readers
    as of c1f8436 (2026-12-07 16:11 UTC): 104/126 (82.5%), 1 false call, 17 wrong arguments, 0 cut-off
    copies run. Read and fixed as shapes (test_set35_shapes.py); one SGLang test is ``malformed`` since."""
    held = held_set(tallies, "set 35")
    assert held.positives >= 126 and held.negatives >= 72
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 13
    assert held.recovered >= 108


def test_set_36_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 36 (the last SGLang unit function-call files, dynamo's Kimi K2 parser tests), named before set
    35's misses were read, measured once with the readers as of 9ac5115 (2026-12-07 16:19 UTC): 21/24
    (87.5%), 1 false call, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set36_shapes.py)."""
    held = held_set(tallies, "set 36")
    assert held.positives >= 24 and held.negatives >= 17
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 23


def test_set_37_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 37 (the model makers' own documents and notebooks, tabbyAPI's parser tests), named before set
    36's misses were read, measured once with the readers as of d01d2e9 (2026-12-07 18:48 UTC): 43/51
    (84.3%), 0 false calls, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set37_shapes.py)."""
    held = held_set(tallies, "set 37")
    assert held.positives >= 51 and held.negatives >= 18
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 50


def test_set_38_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 38 (model makers' notebooks and READMEs; training and evaluation code), named before set 37's
    misses were read, measured once with the readers as of d0f7ede (2026-12-07 18:52 UTC): 35/45 (77.8%),
    0 false calls, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set38_shapes.py)."""
    held = held_set(tallies, "set 38")
    assert held.positives >= 45 and held.negatives >= 17
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 40


def test_set_39_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 39 (agent applications, serving projects not used before), named before set 38's misses were
    read, measured once with the readers as of 0364951 (2026-12-07 18:58 UTC): 29/40 (72.5%), 0 false
    calls, 2 wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set39_shapes.py)."""
    held = held_set(tallies, "set 39")
    assert held.positives >= 40 and held.negatives >= 9
    assert not (held.false_calls or held.cut_ran) and len(held.wrong_args) <= 2
    assert held.recovered >= 31


def test_set_40_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 40 (38 models' chat templates rendered with a call; raw replies in 23 GitHub issues), named
    before set 39's misses were read, measured once with the readers as of 9a12451 (2026-12-07 19:02 UTC):
    114/117 (97.4%), 0 false calls, 1 wrong argument, 0 cut-off copies run. Read and fixed as shapes
    (test_set40_shapes.py)."""
    held = held_set(tallies, "set 40")
    assert held.positives >= 117 and held.negatives >= 2
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 117


def test_set_41_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 41 (16 more template families; 20 more issue threads), named before set 40's misses were read,
    measured once with the readers as of 2a4f8bb (2026-12-07 19:07 UTC): 51/59 (86.4%), 0 false calls, 0
    wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set41_shapes.py)."""
    held = held_set(tallies, "set 41")
    assert held.positives >= 59 and held.negatives >= 3
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 56


def test_set_42_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 42 (nine more template families; 22 more issue threads), named before set 41's misses were read,
    measured once with the readers as of 005589c (2026-12-07 19:13 UTC): 42/44 (95.5%), 0 false calls, 0
    wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set42_shapes.py)."""
    held = held_set(tallies, "set 42")
    assert held.positives >= 44 and held.negatives >= 5
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 44


def test_set_43_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 43 (Functionary, firefunction, Qwen3-Next, Mistral, Granite, Hermes templates; 16 more threads),
    named before set 42's misses were read, measured once with the readers as of 6267353 (2026-12-07 19:20
    UTC): 43/44 (97.7%), 0 false calls, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set43_shapes.py)."""
    held = held_set(tallies, "set 43")
    assert held.positives >= 44 and held.negatives >= 8
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 44


def test_set_44_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 44 (Command R/A, Jamba, firefunction-v1, EXAONE 4 templates; about 22 more threads), named before
    set 43's misses were read, measured once with the readers as of 973c8bc (2026-12-07 19:24 UTC): 32/37
    (86.5%), 0 false calls, 2 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set44_shapes.py)."""
    held = held_set(tallies, "set 44")
    assert held.positives >= 37 and held.negatives >= 3
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 36


def test_set_45_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 45 (raw replies in engines', agents' and clients' trackers that sets 40-44 did not use), named
    before set 44's misses were read, measured once with the readers as of 5f7affe (2026-12-07 19:28 UTC):
    15/18 (83.3%), 0 false calls, 0 wrong arguments, 0 cut-off copies run. Read and fixed as shapes
    (test_set45_shapes.py): 17/18 since. The one left runs with other arguments than the gatherer wrote:
    a null for an optional string is dropped, as the repair does in every format (the tool takes none)."""
    held = held_set(tallies, "set 45")
    assert held.positives >= 18 and held.negatives >= 3
    assert not (held.false_calls or held.cut_ran) and held.wrong_args == ["anythingllm-4675::1"]
    assert held.recovered >= 17


def test_set_46_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 46 (the local model's raw replies over prompts that offer tools, read from /completion without
    the server's tool-call parsing; five more tracker threads), named before set 45's misses were read,
    measured once with the readers as of 458de41 (2026-12-07 22:20 UTC): 93/96 (96.9%), 0 false calls, 2
    wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set46_shapes.py): 94/96 since; the
    two left are nulls for an optional integer, dropped as in every format (counted wrong arguments)."""
    held = held_set(tallies, "set 46")
    assert held.positives >= 96 and held.negatives >= 31
    assert not (held.false_calls or held.cut_ran)
    assert sorted(held.wrong_args) == ["localmodel-19::1", "localmodel-21::1"]
    assert held.recovered >= 94


def test_set_47_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 47 (the local model under opencode's and mini-swe-agent's recorded requests and agentrun's own
    tools, turns added mid-task; five more pages and threads), named before set 46's misses were read,
    measured once with the readers as of d8cea2d (2026-12-07 22:38 UTC): 36/37 (97.3%), 0 false calls, 0
    wrong arguments, 0 cut-off copies run. Read and fixed as shapes (test_set47_shapes.py): 37/37 since."""
    held = held_set(tallies, "set 47")
    assert held.positives >= 37 and held.negatives >= 22
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered >= 37


def test_set_48_met_the_goal_blind(tallies: dict[str, Tally]) -> None:
    """Set 48 (the local model under qwen-code's whole prompt and agentrun's own, tasks continued after tool
    results; six pages and threads), named before set 47's misses were read, gathered by two helpers who
    did not read the readers, measured once with the readers as of 95b97e7 (2026-12-07 23:01 UTC): 16/16
    (100%), 0 false calls over 36 negatives, 0 wrong arguments, 0 cut-off copies run: the issue's goal (98%,
    none false) on a held-out set, a small one (16 calls; the next, set 49, was not met)."""
    held = held_set(tallies, "set 48")
    assert held.positives >= 16 and held.negatives >= 36
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered / held.positives >= 0.98


def test_set_49_recovers_its_calls_since_its_misses_were_read(tallies: dict[str, Tally]) -> None:
    """Set 49 (the local model over 60 requests that need a tool at three temperatures; 8 chat templates
    rendered with a call: ToolACE, OLMo 3, InternLM2, Hunyuan A13B, Seed-OSS, LFM2.5, GLM-4.6, Apriel 1.6),
    named before set 47's misses were read, gathered by two helpers who did not read the readers, measured
    once with the readers as of e21393c (2026-12-07 23:16 UTC): 120/125 (96.0%), 0 false calls, 1 wrong
    argument, 0 cut-off copies run. Read and fixed as shapes (test_set49_shapes.py): 122/125 since; left:
    a JavaScript template string as a JSON value, a JSON string that never closed (not run), and a null for
    an optional string, dropped as everywhere (the wrong argument)."""
    held = held_set(tallies, "set 49")
    assert held.positives >= 125 and held.negatives >= 27
    assert not (held.false_calls or held.cut_ran) and held.wrong_args == ["localmodel4-94::1"]
    assert held.recovered >= 122


def test_the_held_out_set_keeps_its_blind_figure(tallies: dict[str, Tally]) -> None:
    """Set 50 (Bielik's, Gemma 4's and MiniMax-M2's chat templates rendered with a call; the local model's
    part not gathered), named before set 49's misses were read, gathered by a helper who did not read the
    readers, measured once with the readers as of d890ab0 (2026-12-07 23:25 UTC): 9/9 (100%), 0 false
    calls, 0 wrong arguments, 0 cut-off copies run: the issue's goal on a held-out set, a very small one
    with no negatives. Held out: nobody has read it since."""
    held = held_set(tallies, "set 50")
    assert held.positives >= 9
    assert not (held.false_calls or held.cut_ran or held.wrong_args)
    assert held.recovered / held.positives >= 0.98


def test_held_out_sources_are_the_named_sets_not_yet_read(tallies: dict[str, Tally]) -> None:
    """Every source the corpus gathered from another project belongs to a named held-out set; a source
    measured and read since keeps its first figure in WAS_HELD_OUT, and the rest are held out (a set
    may be named before it is gathered)."""
    gathered = {c.source for c in gathered_cases()}
    named = {s for sources in HELD_OUT_SETS.values() for s in sources}
    assert gathered <= named and set(HELD_OUT) <= named
    assert set(WAS_HELD_OUT) == gathered - set(HELD_OUT) and not set(WAS_HELD_OUT) & set(HELD_OUT)


def test_no_source_runs_a_call_the_model_did_not_make(tallies: dict[str, Tally]) -> None:
    """Every source read so far; the held-out set keeps its blind count (its own test above)."""
    assert {s: t.false_calls for s, t in tallies.items() if t.false_calls and s not in HELD_OUT} == {}


def test_no_cut_off_call_runs(tallies: dict[str, Tally]) -> None:
    assert {s: t.cut_ran for s, t in tallies.items() if t.cut_ran} == {}


def test_a_copy_cut_anywhere_runs_only_calls_the_whole_reply_holds() -> None:
    """Every positive case of every source, cut at a dozen points: a cut copy runs only calls
    the whole reply runs (or the source expects), and with ``finish_reason="length"`` none.
    (It found a Seed-OSS example call in the thinking that ran once its close was cut, and
    unwrapped GLM pairs cut inside the next tag.)"""
    import json

    from agentrun.messages import Message
    from agentrun.repair import correct

    def ran(case: Case, text: str, **kw: object) -> set[tuple[str, str]]:
        msg = Message(role="assistant", content=text, reasoning=case.message.reasoning)
        return {
            (c.name, json.dumps(c.arguments, sort_keys=True)) for c in correct(msg, case.tools, **kw).calls
        }

    for case in all_cases():
        text = case.message.content or ""
        if not text or case.message.tool_calls or not case.expected:
            continue
        allowed = ran(case, text, **case.kw) | {(n, json.dumps(a, sort_keys=True)) for n, a in case.expected}
        for cut in range(1, len(text), max(1, len(text) // 12)):
            assert ran(case, text[:cut]) <= allowed, (case.source, case.id, text[:cut][-80:])
            assert not ran(case, text[:cut], finish_reason="length"), (case.source, case.id)
