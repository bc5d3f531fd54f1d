#!/usr/bin/env bash
# Runs the hidden acceptance tests against the Django project in /workspace; writes JUnit XML and
# Harbor's reward file (the fraction of tests that passed).
set -uo pipefail
mkdir -p /logs/verifier
WORKSPACE="${WORKSPACE:-/workspace}"
cd "$WORKSPACE"
export PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 WORKSPACE
TESTS_DIR="${TESTS_DIR:-/tests}"
JUNIT="${JUNIT:-/logs/verifier/junit.xml}"
REWARD="${REWARD:-/logs/verifier/reward.txt}"
# The project never runs in this pytest: the tests serve it as another user (app_client.py,
# app_server.py) and speak to it over HTTP and through its database file, so nothing it does on
# import can reach the hooks or the report. -I and no plugin autoload: neither /workspace nor
# PYTHON* variables reach this interpreter's sys.path.
python -I -m pytest -q -c "$TESTS_DIR/pytest.ini" --rootdir="$TESTS_DIR" --junitxml="$JUNIT" "$TESTS_DIR"
status=$?
python -I - "$JUNIT" "$REWARD" <<'PY'
import sys
import xml.etree.ElementTree as ET

junit, reward = sys.argv[1], sys.argv[2]
try:
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) + int(s.get("skipped", 0)) for s in suites)
    value = (total - bad) / total if total else 0.0
except (OSError, ET.ParseError):
    value = 0.0
with open(reward, "w") as fh:
    fh.write(f"{value:.4f}\n")
print(f"reward {value:.4f}")
PY
exit "$status"
