"""Real model outputs as the replay model's faults: every template re-targets safely."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

import pytest

from agentrun.messages import Message
from agentrun.repair import correct
from agentrun.replay import build
from agentrun.replay.faults import FaultInjector
from agentrun.replay.real_faults import ARGS, NAME, load_real_faults, pick, render
from agentrun.replay.script import ScriptCall, ScriptTurn
from agentrun.toolset import ToolSpec, builtin_specs

WRITE = ("write_file", {"path": "todo.py", "content": 'import json\n\nprint("a \\"quoted\\" {x}")\n'})
SHELL = ("run_shell", {"command": "python -m pytest -q tests/", "timeout": 60})


def test_the_corpus_holds_engine_and_local_model_outputs() -> None:
    faults = load_real_faults()
    families = {f.family for f in faults}
    assert len(faults) >= 75 and len(families) >= 25
    assert any(f.family.startswith("local_") for f in faults)  # the local model's own replies
    sources = {f.source.split(" ")[0].lower() for f in faults}
    assert {"vllm", "sglang", "llama.cpp", "ollama"} <= sources  # each engine's parser tests
    assert all(f.text.count(NAME) == 1 and f.text.count(ARGS) == 1 for f in faults)


@pytest.mark.parametrize("call", [WRITE, SHELL], ids=["write_file", "run_shell"])
def test_every_template_is_read_back_as_exactly_the_scripted_call(call: tuple[str, dict]) -> None:  # type: ignore[type-arg]
    for fault in load_real_faults():
        text = render(fault, [call])
        got = correct(Message(role="assistant", content=text), builtin_specs())
        assert [(c.name, c.arguments) for c in got.calls] == [call], (fault.family, fault.source, text)


def test_the_shipped_corpus_is_what_the_builder_makes() -> None:
    root = Path(__file__).resolve().parents[3]
    spec = importlib.util.spec_from_file_location("build_real_faults", root / "scripts/build_real_faults.py")
    assert spec is not None and spec.loader is not None
    builder = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builder)
    shipped = (root / "agentrun/replay/real_faults.jsonl").read_text(encoding="utf-8")
    assert builder.build() == shipped  # else: python scripts/build_real_faults.py


def test_raw_newlines_are_kept_where_the_model_wrote_them() -> None:
    raw = [f for f in load_real_faults() if f.raw_newlines]
    assert raw  # the local model writes newlines unescaped inside JSON strings
    assert "import json\n\nprint" in render(raw[0], [WRITE])


def test_pick_is_seeded() -> None:
    a = pick([WRITE], random.Random(3))
    b = pick([WRITE], random.Random(3))
    assert a is not None and b is not None and a == b


def test_injector_with_real_source_leaks_calls_into_real_text() -> None:
    injector = FaultInjector(rate=1.0, seed=1, source="real")
    turn = ScriptTurn(tool_calls=[ScriptCall(name=WRITE[0], arguments=WRITE[1])])
    out = injector.mutate(turn, [{"role": "user", "content": "go"}], 0)
    assert out.tool_calls == [] and WRITE[0] in (out.content or "")
    assert injector.injected["text_tool_call"] == 1 and sum(injector.families.values()) == 1
    quiet = injector.mutate(ScriptTurn(content="Done."), [{"role": "user", "content": "x"}], 1)
    assert quiet.content == "Done."  # a turn without calls has nothing to leak


def test_unknown_source_and_labels() -> None:
    with pytest.raises(ValueError, match="fault source"):
        FaultInjector(rate=0.5, source="imagined")
    assert "real model outputs" in build.describe(0.2, "mixed", "real")
    assert "(mixed)" in build.describe(0.2, "mixed", "designed")


BASH_TOOL = ToolSpec(
    name="bash",
    description="Execute a bash command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]},
)


def test_a_real_fault_is_drawn_against_the_requests_own_tools() -> None:
    """mini-swe-agent's one tool is ``bash``: against agentrun's tools corrected mode would run it
    as ``run_shell`` (an alias), so no template is safe; against the request's own it is."""
    call = ("bash", {"command": "cat <<'EOF' > hello.py\nprint('hello')\nEOF"})
    assert pick([call], random.Random(3)) is None
    drawn = pick([call], random.Random(3), tools=[BASH_TOOL])
    assert drawn is not None
    got = correct(Message(role="assistant", content=drawn[1]), [BASH_TOOL])
    assert [(c.name, c.arguments) for c in got.calls] == [call]
    injector = FaultInjector(rate=1.0, seed=1, source="real")
    turn = ScriptTurn(tool_calls=[ScriptCall(name=call[0], arguments=call[1])])
    assert injector.mutate(turn, [{"role": "user", "content": "go"}], 0).tool_calls == turn.tool_calls
    out = injector.mutate(turn, [{"role": "user", "content": "go"}], 1, [BASH_TOOL])
    assert out.tool_calls == [] and "hello.py" in (out.content or "")


def test_templates_cover_xml_key_value_pythonic_and_gemma_families() -> None:
    """--fault-source real re-targets the families that write one parameter at a time too (#21)."""
    param = [f for f in load_real_faults() if f.param]
    kinds = {
        "xml": any("parameter" in f.param or "<param" in f.param for f in param),
        "key/value": any("<arg_key>" in f.param for f in param),
        "pythonic": any(f.values == "python" for f in param),
        "gemma": any(f.values in ("gemma", "escape") for f in param),
    }
    assert kinds == dict.fromkeys(kinds, True)
    for fault in param:  # each writes every argument in its own pattern, names and values
        text = render(fault, [SHELL])
        assert text.count("python -m pytest -q tests/") == 1 and "timeout" in text and "60" in text
