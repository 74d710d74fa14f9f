#!/usr/bin/env bash
# Checks notebooks/run.ipynb with nbval, offline and deterministically.
#
# nbval cannot pass parameters, so papermill first writes a copy of the notebook with the CI parameters injected
# (tests/data/nbval-params.yaml; --prepare-only executes nothing), then `pytest --nbval-lax` runs every cell of that
# copy with the LLM response cache in replay-only mode, from a copy of the committed tests/data/nbval-cache.sqlite.
# A call that is not in the cache (a prompt, scenario or agent changed) fails the notebook with a message saying to
# re-record: bash scripts/record-nbval-cache.sh
#
# Usage: bash scripts/nbval.sh [extra pytest arguments]      (PYTHON=/path/to/python to use another interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
work=build/nbval
cache="${NBVAL_CACHE:-tests/data/nbval-cache.sqlite}"
if [ ! -f "$cache" ]; then
    echo "error: $cache is missing; record it with: bash scripts/record-nbval-cache.sh" >&2
    exit 1
fi
rm -rf "$work"
mkdir -p "$work"
# A copy: opening a SQLite file, even to read, may leave -wal/-shm files beside it.
cp "$cache" "$work/cache.sqlite"
"$PYTHON" -m papermill notebooks/run.ipynb "$work/run.ipynb" --prepare-only -f tests/data/nbval-params.yaml \
    --no-progress-bar --log-level WARNING
# The recording was made with the embedded local model: make sure no API endpoint in the environment takes over.
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u OPENAI_MODEL -u CONVOEVAL_SIMULATOR_MODEL -u CONVOEVAL_JUDGE_MODEL \
    -u CONVOEVAL_SIMULATOR_BASE_URL -u CONVOEVAL_JUDGE_BASE_URL \
    CONVOEVAL_CACHE=replay CONVOEVAL_CACHE_PATH="$PWD/$work/cache.sqlite" \
    CONVOEVAL_STORE_URL="sqlite:///$PWD/$work/store.db" \
    "$PYTHON" -m pytest --nbval-lax -p no:cacheprovider -q "$work/run.ipynb" "$@"
