#!/usr/bin/env bash
# Set up agentrun on this machine: a Docker engine that answers, a virtualenv with agentrun
# installed, and the sandbox images. Safe to run again; it only does what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1m[setup]\033[0m %s\n' "$*" >&2; }

ensure_docker() {
  if docker info >/dev/null 2>&1; then return; fi
  if ! command -v dockerd >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing the Docker engine (docker.io) with apt-get"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
    else
      log "no Docker engine: install Docker (https://docs.docker.com/engine/install/) and start it"; exit 2
    fi
  fi
  if [ "$(id -u)" = 0 ]; then
    log "starting dockerd (log: /var/log/agentrun-dockerd.log)"
    (setsid nohup dockerd >/var/log/agentrun-dockerd.log 2>&1 &)
    for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && return; sleep 1; done
    log "dockerd did not come up; see /var/log/agentrun-dockerd.log"; tail -20 /var/log/agentrun-dockerd.log >&2; exit 2
  fi
  log "Docker is installed but not running: start it (sudo systemctl start docker)"; exit 2
}

ensure_venv() {
  if [ ! -x .venv/bin/python ]; then
    log "creating .venv"
    python3 -m venv .venv
  fi
  if ! .venv/bin/python -c "import agentrun, pytest" >/dev/null 2>&1 || [ pyproject.toml -nt .venv/.agentrun-installed ]; then
    log "installing agentrun and its dev tools into .venv"
    .venv/bin/python -m pip install -q --upgrade pip >/dev/null
    .venv/bin/python -m pip install -q -e '.[dev]'
    # Ray for the `load --ray` tests (an optional extra: agentrun works without it)
    if [ "${CI:-}" = true ] || [ "${AGENTRUN_RAY_TESTS:-}" = 1 ]; then .venv/bin/python -m pip install -q -e '.[dev,ray]'; fi
    touch .venv/.agentrun-installed
  fi
}

ensure_docker
ensure_venv
log "building sandbox images (reused when present)"
.venv/bin/agentrun sandbox build
