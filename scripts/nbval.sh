#!/usr/bin/env bash
# Checks a notebook with nbval, offline and deterministically: notebooks/run.ipynb (default) or
# notebooks/agreement.ipynb.
#
# nbval cannot pass parameters, so papermill first writes a copy of the notebook with the CI parameters injected
# (tests/data/nbval-params.yaml for run, tests/data/nbval-<name>-params.yaml for the others; --prepare-only executes
# nothing), then `pytest --nbval-lax` runs every cell of that copy with the LLM response cache in replay-only mode,
# from a copy of the committed cache (tests/data/nbval-cache.sqlite, tests/data/nbval-<name>-cache.sqlite).
# A call that is not in the cache (a prompt, scenario or agent changed) fails the notebook with a message saying to
# re-record: bash scripts/record-nbval-cache.sh [name]
#
# Usage: bash scripts/nbval.sh [run|agreement] [extra pytest arguments]   (PYTHON=/path/to/python for another one)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
name=run
if [ $# -gt 0 ] && [ -f "notebooks/$1.ipynb" ]; then name="$1"; shift; fi
suffix=$([ "$name" = run ] && echo "" || echo "-$name")
params="tests/data/nbval${suffix}-params.yaml"
work="build/nbval${suffix}"
cache="${NBVAL_CACHE:-tests/data/nbval${suffix}-cache.sqlite}"
if [ ! -f "$cache" ]; then
    echo "error: $cache is missing; record it with: bash scripts/record-nbval-cache.sh $name" >&2
    exit 1
fi
rm -rf "$work"
mkdir -p "$work"
# A copy: opening a SQLite file, even to read, may leave -wal/-shm files beside it.
cp "$cache" "$work/cache.sqlite"
"$PYTHON" -m papermill "notebooks/$name.ipynb" "$work/$name.ipynb" --prepare-only -f "$params" \
    --no-progress-bar --log-level WARNING
# The recording was made with the embedded local model: make sure no API endpoint in the environment takes over.
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u OPENAI_MODEL -u CONVOEVAL_SIMULATOR_MODEL -u CONVOEVAL_JUDGE_MODEL \
    -u CONVOEVAL_SIMULATOR_BASE_URL -u CONVOEVAL_JUDGE_BASE_URL \
    CONVOEVAL_CACHE=replay CONVOEVAL_CACHE_PATH="$PWD/$work/cache.sqlite" \
    CONVOEVAL_STORE_URL="sqlite:///$PWD/$work/store.db" \
    "$PYTHON" -m pytest --nbval-lax -p no:cacheprovider -q "$work/$name.ipynb" "$@"
