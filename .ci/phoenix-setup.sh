#!/usr/bin/env bash
# Create (or reuse) the Arize Phoenix venv used as a real OTLP collector by the telemetry
# integration tests. Phoenix lives in its own venv because its dependency tree is heavy and
# pinned; the test venv only needs the OpenTelemetry SDK and exporters.
#
#   bash .ci/phoenix-setup.sh            # prints the venv's python on the last line
#   AGENTRUN_PHOENIX_VENV=/path ...      # choose the venv location
#
# The tests find the same venv through AGENTRUN_PHOENIX_VENV (default below) or PHOENIX_PY.
set -euo pipefail

venv="${AGENTRUN_PHOENIX_VENV:-$HOME/.cache/agentrun-test/phoenix-venv}"
spec="${AGENTRUN_PHOENIX_SPEC:-arize-phoenix==20.26.1}"
python="${PYTHON:-python3}"

installed() {  # "arize-phoenix==X.Y.Z", or nothing; importing phoenix itself would create ~/.phoenix
  "$venv/bin/python" -c "import importlib.metadata as m; print('arize-phoenix==' + m.version('arize-phoenix'))" 2>/dev/null
}

if [ -x "$venv/bin/python" ] && [ "$(installed)" = "$spec" ]; then
  echo "phoenix venv ready: $venv ($spec)" >&2
else
  echo "creating phoenix venv at $venv ($spec); this takes a minute or two" >&2
  if [ -e "$venv" ] && [ ! -f "$venv/pyvenv.cfg" ]; then
    echo "$venv exists and is not a venv; refusing to replace it" >&2
    exit 1
  fi
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec"
  PHOENIX_WORKING_DIR="$(mktemp -d)" "$venv/bin/python" -c "import phoenix.server.main"
fi
echo "$venv/bin/python"
