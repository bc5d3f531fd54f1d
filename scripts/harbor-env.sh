#!/usr/bin/env bash
# The Harbor reference environment: an image with Harbor 0.25 (Python 3.13, Debian trixie),
# the Docker CLI and Docker Compose v2, built once from a debootstrap base (no registry
# needed) and reused by its tag. Then run harbor in it against the host engine.
#
#   scripts/harbor-env.sh build                 # build agentrun-harbor:0.25.0 if missing
#   scripts/harbor-env.sh run harbor lint tasks/*   # any command, in the current folder
#   scripts/harbor-env.sh compose-plugin DIR    # copy its docker-compose binary to DIR
#
# `run` mounts the Docker socket and the current folder (and /tmp) at the same paths as on
# the host, because Harbor's docker environment bind-mounts its trial folders by host path.
set -euo pipefail

HARBOR_VERSION="${HARBOR_VERSION:-0.25.0}"
TAG="${HARBOR_IMAGE:-agentrun-harbor:$HARBOR_VERSION}"
BASE="${HARBOR_BASE_IMAGE:-agentrun-base:trixie}"
HERE="$(cd "$(dirname "$0")/.." && pwd)"

build() {
    if docker image inspect "$TAG" >/dev/null 2>&1; then
        return 0
    fi
    if ! docker image inspect "$BASE" >/dev/null 2>&1; then
        DEBIAN_SUITE=trixie bash "$HERE/sandboxes/bootstrap-base.sh" "$BASE"
    fi
    local ctx
    ctx="$(mktemp -d)"
    cp "$HERE/sandboxes/harbor/Dockerfile" "$ctx/"
    for pair in /etc/ssl/certs/ca-certificates.crt:host-ca.crt /etc/pip.conf:pip.conf; do
        if [ -f "${pair%%:*}" ]; then cp "${pair%%:*}" "$ctx/${pair##*:}"; else : > "$ctx/${pair##*:}"; fi
    done
    docker build -q --build-arg "BASE_IMAGE=$BASE" --build-arg "HARBOR_VERSION=$HARBOR_VERSION" -t "$TAG" "$ctx"
    rm -rf "$ctx"
}

run() {
    build >/dev/null
    local tty=()
    if [ -t 0 ]; then tty=(-t); fi
    docker run --rm -i "${tty[@]}" \
        -v /var/run/docker.sock:/var/run/docker.sock \
        -v "$PWD:$PWD" -v /tmp:/tmp -w "$PWD" \
        -e HOME=/tmp -e PYTHONDONTWRITEBYTECODE=1 \
        --network host "$TAG" "$@"
}

compose_plugin() {
    build >/dev/null
    mkdir -p "$1"
    local id
    id="$(docker create "$TAG" true)"
    docker cp "$id:/usr/libexec/docker/cli-plugins/docker-compose" "$1/docker-compose"
    docker rm "$id" >/dev/null
}

case "${1:-}" in
    build) build ;;
    run) shift; run "$@" ;;
    compose-plugin) compose_plugin "$2" ;;
    *) echo "usage: $0 build | run CMD... | compose-plugin DIR" >&2; exit 2 ;;
esac
