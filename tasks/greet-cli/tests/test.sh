#!/usr/bin/env bash
# Runs the hidden tests against /workspace; writes JUnit XML and Harbor's reward file.
set -uo pipefail
mkdir -p /logs/verifier
cd /workspace
export PYTHONDONTWRITEBYTECODE=1 PYTHONPATH=/workspace
python -m pytest -q -p no:cacheprovider -c /tests/pytest.ini --rootdir=/tests \
  --junitxml=/logs/verifier/junit.xml /tests
status=$?
if [ "$status" -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit "$status"
