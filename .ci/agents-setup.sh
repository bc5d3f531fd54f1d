#!/usr/bin/env bash
# Agents the gateway is tested with (issue 20 item 5), each at its pinned version, installed once
# outside the checkout (under $AGENTRUN_CACHE_DIR, else ~/.cache/agentrun, reused when present)
# by its adapter's own commands (agentrun/agents/): Qwen Code from npm (~55 MB, ~10 s; node >= 20),
# opencode from npm (a native binary, ~270 MB with its plugin and ripgrep, ~40 s) and mini-swe-agent
# from PyPI in its own venv (~750 MB, ~1-2 min). A failed install is reported here and fails its
# test in CI (a missing agent is a skip outside CI). The sandbox's copies are image layers built by
# the tests that use them (agentrun/agents/image.py), once per task image.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m agentrun.agents.install || printf '\033[1m[agents]\033[0m an install failed (above)\n' >&2
# each agent's image layer on the tasks its tests run (todo-cli, greet-cli), once per task image
# (~2 min for mini-swe-agent's pip install, ~1 min for Qwen Code's node and npm install)
if docker info >/dev/null 2>&1; then
  .venv/bin/python -m agentrun.agents.image todo-cli greet-cli || printf '\033[1m[agents]\033[0m an image layer failed (above)\n' >&2
fi
