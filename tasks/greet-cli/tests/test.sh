#!/usr/bin/env bash
# Runs the hidden tests against /workspace; writes JUnit XML and Harbor's reward file.
set -uo pipefail
mkdir -p /logs/verifier
cd /workspace
export PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# The agent's code never runs in this pytest: the tests start it as child processes of another
# user (boundary.py), so nothing it does on import can reach the hooks or the report. -I and no
# plugin autoload: neither /workspace nor PYTHON* variables reach this interpreter's sys.path.
python -I -m pytest -q -p no:cacheprovider -c /tests/pytest.ini --rootdir=/tests \
  --junitxml=/logs/verifier/junit.xml /tests
status=$?
if [ "$status" -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit "$status"
