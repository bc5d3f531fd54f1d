#!/usr/bin/env bash
# Runs the hidden tests against /workspace; writes JUnit XML and Harbor's reward file.
set -uo pipefail
mkdir -p /logs/verifier
cd /workspace
export PYTHONDONTWRITEBYTECODE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
# -I: neither the working folder nor PYTHON* variables reach sys.path, so a pytest.py or
# sitecustomize.py in /workspace cannot stand in for pytest; pytest adds /workspace itself,
# after it is loaded. No plugin autoload: a *.dist-info in /workspace would be one.
python -I -m pytest -q -p no:cacheprovider -c /tests/pytest.ini --rootdir=/tests \
  -o pythonpath=/workspace --junitxml=/logs/verifier/junit.xml /tests
status=$?
if [ "$status" -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
exit "$status"
