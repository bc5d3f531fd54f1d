#!/usr/bin/env bash
# Oracle: put the reference files in place, as Harbor's oracle agent runs it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cp "$here/greet.py" /workspace/greet.py
cp "$here/test_greet.py" /workspace/test_greet.py
