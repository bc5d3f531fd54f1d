"""``python -m agentrun.agents.install [NAME ...]``: each agent's pinned version into the cache.

Once per version (``.installed`` marks a finished install; a half-done one is redone), under
``$AGENTRUN_CACHE_DIR/agents/NAME-VERSION`` (``host.installed_prefix``), by the adapter's own
install commands: what ``.ci/agents-setup.sh`` runs before the tests.
"""

from __future__ import annotations

import shutil
import sys

from agentrun import lifeline
from agentrun.agents import AGENTS, get_agent
from agentrun.agents.host import installed_prefix
from agentrun.errors import UserError


def install(name: str) -> bool:
    """Install agent ``name`` unless it is; False (and why, on stderr) when a command failed."""
    adapter = get_agent(name)
    prefix = installed_prefix(adapter)
    if (prefix / ".installed").is_file():
        print(f"[agents] {name} {adapter.version} present: {prefix}", file=sys.stderr)
        return True
    shutil.rmtree(prefix, ignore_errors=True)
    prefix.parent.mkdir(parents=True, exist_ok=True)
    print(f"[agents] installing {name} {adapter.version} into {prefix}", file=sys.stderr)
    for command in adapter.install_commands(str(prefix)):
        done = lifeline.run(["bash", "-c", command], timeout=900, capture_output=True, text=True)
        if done.returncode != 0:
            print(
                f"[agents] {name}: `{command}` failed ({done.returncode}): {done.stderr[-1500:]}",
                file=sys.stderr,
            )
            return False
    (prefix / ".installed").touch()
    return True


def main(argv: list[str]) -> int:
    try:
        results = [install(name) for name in (argv or sorted(AGENTS))]
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
