#!/usr/bin/env bash
# Set up (engine, venv, images) and run the whole test suite, Docker integration tests included.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ -x .ci/phoenix-setup.sh ]; then ./.ci/phoenix-setup.sh; fi
exec .venv/bin/python -m pytest "$@"
