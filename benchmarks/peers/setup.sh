#!/usr/bin/env bash
# Create benchmarks/.venv-peers: a virtualenv of its own for the peer tools bench_peers.py compares convoeval with.
# Nothing here is a dependency of convoeval (pyproject.toml does not name them); the folder is git-ignored.
#
#   bash benchmarks/peers/setup.sh            # the pinned versions below (what benchmarks/results/peers.json used)
#   PEERS_LATEST=1 bash benchmarks/peers/setup.sh   # the newest releases instead (then record them)
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=.venv-peers
PY=${PYTHON:-python3}

# Pinned: the versions the committed figures were measured with.
PINS=(
  "openevals==0.2.2"
  "langchain-openai==1.7.3"
)

[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
"$VENV/bin/python" -m pip install --quiet --upgrade pip
if [ "${PEERS_LATEST:-0}" = 1 ]; then
  "$VENV/bin/python" -m pip install --quiet --upgrade openevals langchain-openai
else
  "$VENV/bin/python" -m pip install --quiet "${PINS[@]}"
fi
"$VENV/bin/python" - <<'PY'
from importlib.metadata import version
for name in ("openevals", "langchain-openai", "langchain-core", "langsmith", "openai", "httpx"):
    print(f"{name}=={version(name)}")
PY
