#!/usr/bin/env bash
# A second, real Docker engine on this machine: the "remote" host for the remote-engine tests.
# Privileged containers (so Docker-in-Docker) are refused here; a second dockerd with its own
# data root, exec root, pidfile, socket and a loopback TCP port is not. It must not touch the
# first engine's networks: no iptables, no masquerading, and a bridge of its own. NOT
# --bridge=none: a dockerd started with it deletes the host's docker0 (libnetwork's
# removeDefaultBridgeInterface), which cuts the first engine's containers off. Its bridge has
# no NAT, so builds on it use the host's network (AGENTRUN_BUILD_NETWORK=host).
# Usage: docker2.sh start|stop|status
set -euo pipefail
NAME=${AGENTRUN_DOCKER2_NAME:-agentrun-docker2}
SOCK=/run/$NAME.sock
PORT=${AGENTRUN_DOCKER2_PORT:-23750}
PIDFILE=/run/$NAME.pid
LOG=/tmp/$NAME.log
BRIDGE=${AGENTRUN_DOCKER2_BRIDGE:-agentrun-br2}
BRIDGE_CIDR=${AGENTRUN_DOCKER2_CIDR:-10.213.7.1/24}

start() {
  if [ -S "$SOCK" ] && docker -H "unix://$SOCK" info >/dev/null 2>&1; then
    echo "unix://$SOCK"; return 0
  fi
  mkdir -p "/var/lib/$NAME" "/run/$NAME"
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge
    ip addr add "$BRIDGE_CIDR" dev "$BRIDGE"
    ip link set "$BRIDGE" up
  fi
  # --exec-root and a cgroup parent of its own: the two engines' containerd shims and cgroups never meet
  nohup dockerd --data-root "/var/lib/$NAME" --exec-root "/run/$NAME" --pidfile "$PIDFILE" \
    -H "unix://$SOCK" -H "tcp://127.0.0.1:$PORT" --bridge="$BRIDGE" --iptables=false --ip-masq=false \
    --ip-forward=false --cgroup-parent="/$NAME" --containerd-namespace "$NAME" \
    --containerd-plugins-namespace "$NAME-plugins" >"$LOG" 2>&1 &
  for _ in $(seq 1 60); do
    if docker -H "unix://$SOCK" info >/dev/null 2>&1; then echo "unix://$SOCK"; return 0; fi
    sleep 0.5
  done
  echo "the second dockerd did not start; the end of $LOG:" >&2; tail -20 "$LOG" >&2; return 1
}

stop() {
  if [ -f "$PIDFILE" ]; then
    kill "$(cat "$PIDFILE")" 2>/dev/null || true
    for _ in $(seq 1 40); do [ -f "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null || break; sleep 0.5; done
  fi
  ip link del "$BRIDGE" 2>/dev/null || true
}

case "${1:-start}" in
  start) start ;;
  stop) stop ;;
  status) docker -H "unix://$SOCK" info --format '{{.ServerVersion}} {{.NCPU}} CPUs' ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
