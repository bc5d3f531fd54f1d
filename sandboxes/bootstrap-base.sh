#!/usr/bin/env bash
# Build agentrun's offline base image when no registry is reachable: a minimal Debian
# bookworm root made with debootstrap (from deb.debian.org, or $DEBIAN_MIRROR), imported
# into Docker as agentrun-base:bookworm (python3 3.11, venv, pip, git, CA certificates).
#
#   sudo sandboxes/bootstrap-base.sh [TAG]
#
# Needs root (debootstrap) and a Docker engine; installs debootstrap with apt-get if missing.
set -euo pipefail

TAG="${1:-agentrun-base:bookworm}"
MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SUITE="${DEBIAN_SUITE:-bookworm}"

if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap-base.sh: debootstrap needs root; run it with sudo" >&2
    exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    echo "==> installing debootstrap with apt-get"
    apt-get update -q
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap
fi

ROOT="$(mktemp -d "${TMPDIR:-/tmp}/agentrun-rootfs.XXXXXX")"
trap 'rm -rf "$ROOT"' EXIT

echo "==> debootstrap $SUITE from $MIRROR into $ROOT (a few minutes)"
debootstrap --variant=minbase --include=python3,python3-venv,python3-pip,git,ca-certificates \
    "$SUITE" "$ROOT" "$MIRROR"
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*

echo "==> docker import as $TAG"
tar -C "$ROOT" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' - "$TAG"
echo "==> done: $TAG"
