#!/usr/bin/env bash
# Set up (engine, venv, images) and run the whole test suite, Docker integration tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ -x .ci/phoenix-setup.sh ]; then ./.ci/phoenix-setup.sh; fi
if [ -x .ci/harbor-setup.sh ]; then ./.ci/harbor-setup.sh; fi
# LiteLLM (client and proxy) for the gateway's peer tests, in its own cached venv (~2.5 min once)
if [ -x .ci/peers-setup.sh ]; then ./.ci/peers-setup.sh; fi
# Qwen Code and opencode (npm) and mini-swe-agent (PyPI), pinned, for the gateway's agent tests (~1-2 min once, cached)
if [ -x .ci/agents-setup.sh ]; then ./.ci/agents-setup.sh; fi
# the real-model check (a ~5 min llama.cpp build and a 1.1 GB model, cached outside the checkout)
if [ "${CI:-}" = true ] || [ "${AGENTRUN_LOCAL_MODEL_TESTS:-}" = 1 ]; then .venv/bin/agentrun local-model prepare; fi
# the report's browser test opens pages in Debian's chromium (playwright drives it; its own download is not used)
if [ "${CI:-}" = true ] && ! command -v chromium >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# lint and types first: cheap, and a failure here says more than a test would
.venv/bin/ruff check . && .venv/bin/ruff format --check agentrun tests bench && .venv/bin/mypy agentrun
# the guard on the tool channel's speed (issue 26): read_file over the channel at least 60x faster
# than an SDK exec_run of cat measured in the same run, median of three (a ratio, not a time)
if [ "${CI:-}" = true ]; then .venv/bin/python bench/channel_vs_exec.py --check 60 --repeat 3; fi
# the 30 slowest tests at the end, so CI time (budget 60 min) can be watched run to run
exec .venv/bin/python -m pytest --durations=30 "$@"
