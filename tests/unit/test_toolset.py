"""Tool specs derived from tools/builtin.py."""

from __future__ import annotations

from agentrun.toolset import (
    ToolSpec,
    builtin_specs,
    load_builtin_module,
    parse_docstring,
    spec_from_function,
)


def by_name() -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in builtin_specs()}


def test_every_builtin_tool_has_a_spec_in_order() -> None:
    names = [spec.name for spec in builtin_specs()]
    assert names == ["read_file", "write_file", "edit_file", "list_files", "search", "run_shell"]
    assert names == [fn.__name__ for fn in load_builtin_module().TOOLS]


def test_schema_comes_from_signature_and_docstring() -> None:
    spec = by_name()["read_file"]
    assert spec.description == "Read a text file from the workspace, whole or a range of lines."
    params = spec.parameters
    assert params["type"] == "object" and params["required"] == ["path"]
    assert params["additionalProperties"] is False
    assert params["properties"]["path"]["type"] == "string"
    assert params["properties"]["path"]["description"].startswith("File path, relative")
    start = params["properties"]["start_line"]
    assert start["anyOf"] == [{"type": "integer"}, {"type": "null"}] and start["default"] is None
    shell = by_name()["run_shell"].parameters["properties"]["timeout"]
    assert shell["type"] == "number" and shell["default"] == 120
    assert "title" not in str(builtin_specs())


def test_spec_round_trips_through_openai_format() -> None:
    for spec in builtin_specs():
        assert ToolSpec.from_openai(spec.to_openai()) == spec


def test_docstring_parsing_handles_wrapped_args() -> None:
    def tool(title: str, count: int = 2) -> str:
        """Do a thing.

        More words that are not the description.

        Args:
            title: The title,
                wrapped onto a second line.
            count (int): How many.

        Returns:
            Something.
        """
        return title * count

    description, params = parse_docstring(tool.__doc__)
    assert description == "Do a thing."
    assert params == {"title": "The title, wrapped onto a second line.", "count": "How many."}
    schema = spec_from_function(tool).parameters
    assert schema["properties"]["title"] == {
        "description": "The title, wrapped onto a second line.",
        "type": "string",
    }


def test_parallel_first_loads_never_see_a_half_executed_module() -> None:
    import sys
    import threading

    from agentrun import toolset

    errors: list[BaseException] = []

    def load() -> None:
        try:
            assert toolset.load_builtin_module().TOOLS
        except BaseException as exc:
            errors.append(exc)

    for _ in range(10):
        sys.modules.pop(toolset.SANDBOX_TOOLS_MODULE, None)
        threads = [threading.Thread(target=load) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
    assert not errors


def test_tool_facts_come_from_the_declarations_next_to_each_tool() -> None:
    from agentrun.errors import TOOL_ERROR_KINDS
    from agentrun.toolset import tool_facts

    facts, names = tool_facts(), {spec.name for spec in builtin_specs()}
    assert facts.read_only == {"read_file", "list_files", "search"}
    assert set(facts.aliases.values()) == names and not set(facts.aliases) & names
    assert facts.aliases["bash"] == "run_shell" and facts.editor_commands["view"] == "read_file"
    assert set(facts.editor_commands.values()) <= names
    assert "file_path" in facts.argument_aliases["path"]
    assert {"parsing", "validation", "timeout", "runtime"} <= TOOL_ERROR_KINDS


def test_host_deadlines_are_declared_with_the_tools() -> None:
    from agentrun.toolset import tool_facts

    facts = tool_facts()
    # run_shell takes its own timeout: the host waits that plus the declared grace
    assert (
        facts.deadline_s("run_shell", {"command": "true", "timeout": 30})
        == 30 + facts.timeout_grace_s["run_shell"]
    )
    # a file tool has a fixed deadline (a search with a runaway regex is stopped)
    assert facts.deadline_s("search", {"pattern": "x"}) == facts.host_deadline_s["search"] > 0
    assert "search" not in facts.timeout_grace_s
    # a name the tools do not declare still gets a bounded wait
    assert facts.deadline_s("no_such_tool", {"timeout": 1e9}) == 60.0
