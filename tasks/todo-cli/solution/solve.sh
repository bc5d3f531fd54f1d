#!/usr/bin/env bash
# Oracle: put the reference files in place, as Harbor's oracle agent runs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p /workspace/tests
cp "$here/todo.py" /workspace/todo.py
cp "$here/tests/test_todo.py" /workspace/tests/test_todo.py
