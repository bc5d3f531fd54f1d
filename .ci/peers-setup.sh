#!/usr/bin/env bash
# Peers the gateway is tested and measured against, each in its own venv outside the checkout
# (cached under $AGENTRUN_CACHE_DIR, else ~/.cache/agentrun, and reused when present):
#   peers/litellm: LiteLLM's Python client and its proxy (`litellm[proxy]`, ~750 MB, ~90-120 s once).
# Offline at run time: the tests set LITELLM_LOCAL_MODEL_COST_MAP=True (no cost-map fetch).
set -euo pipefail
cd "$(dirname "$0")/.."
log() { printf '\033[1m[peers]\033[0m %s\n' "$*" >&2; }
cache="${AGENTRUN_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentrun}"
venv="$cache/peers/litellm"
if [ -x "$venv/bin/python" ] && [ -f "$venv/.installed" ]; then
  log "LiteLLM venv present: $venv"
  exit 0
fi
log "installing litellm[proxy] into $venv (once; ~2 min)"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q 'litellm[proxy]>=1.60'
"$venv/bin/python" -c 'import litellm, openai' && touch "$venv/.installed"
log "LiteLLM venv ready: $venv"
