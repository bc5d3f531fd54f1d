#!/usr/bin/env bash
# Oracle: copy the reference project (everything beside this script) into /workspace.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${WORKSPACE:-/workspace}"
mkdir -p "$dest"
tar -C "$here" --exclude=./solve.sh --exclude='__pycache__' --exclude='*.pyc' --exclude=db.sqlite3 -cf - . \
    | tar -C "$dest" -xf -
