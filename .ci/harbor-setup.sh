#!/usr/bin/env bash
# Harbor parity in CI: the Harbor 0.25 reference image (Debian trixie, built once from a
# debootstrap base and reused by its tag), Docker Compose v2 taken from it when this machine
# has none (compose tasks), and `harbor lint` on agentrun's own tasks (must report nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\033[1m[harbor]\033[0m %s\n' "$*" >&2; }

log "Harbor reference image (built once, then reused)"
./scripts/harbor-env.sh build
if ! docker compose version >/dev/null 2>&1; then
  log "installing Docker Compose v2 from the reference image into /usr/local/lib/docker/cli-plugins"
  ./scripts/harbor-env.sh compose-plugin /usr/local/lib/docker/cli-plugins
fi
log "harbor lint tasks/*"
./scripts/harbor-env.sh run harbor lint tasks/*/
