#!/usr/bin/env bash
# Re-records the LLM replies that scripts/nbval.sh (nbval in CI) replays: tests/data/nbval-cache.sqlite for
# notebooks/run.ipynb (default), tests/data/nbval-<name>-cache.sqlite for notebooks/<name>.ipynb.
#
# Run it after changing a prompt, a scenario used by the notebook's CI parameters (tests/data/nbval*-params.yaml), a
# reference agent's wording or the default local model; then run scripts/nbval.sh [name] and commit the cache file.
# It runs the notebook once with the embedded local model (minutes on 2 cores) into a fresh cache, then compacts it.
#
# Usage: bash scripts/record-nbval-cache.sh [run|agreement]
#        NBVAL_RECORD_FROM=old.sqlite bash scripts/record-nbval-cache.sh agreement   # keep the calls already recorded
#        there (an interrupted recording, or a change that touches only some calls): only the missing ones are made
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
name="${1:-run}"
suffix=$([ "$name" = run ] && echo "" || echo "-$name")
params="tests/data/nbval${suffix}-params.yaml"
target="tests/data/nbval${suffix}-cache.sqlite"
work="build/nbval${suffix}-record"
rm -rf "$work"
mkdir -p "$work"
if [ -n "${NBVAL_RECORD_FROM:-}" ]; then cp "$NBVAL_RECORD_FROM" "$work/cache.sqlite"; fi
env -u OPENAI_API_KEY -u OPENAI_BASE_URL -u OPENAI_MODEL -u CONVOEVAL_SIMULATOR_MODEL -u CONVOEVAL_JUDGE_MODEL \
    -u CONVOEVAL_SIMULATOR_BASE_URL -u CONVOEVAL_JUDGE_BASE_URL \
    CONVOEVAL_CACHE=rw CONVOEVAL_CACHE_PATH="$PWD/$work/cache.sqlite" \
    CONVOEVAL_STORE_URL="sqlite:///$PWD/$work/store.db" \
    "$PYTHON" -m papermill "notebooks/$name.ipynb" "$work/$name.ipynb" -f "$params" \
    -p output_dir "$work/out" --log-level WARNING
# One self-contained file (no WAL), vacuumed, so the committed cache is small and reads the same everywhere.
"$PYTHON" - "$work/cache.sqlite" "$target" <<'PY'
import shutil, sqlite3, sys
src, dst = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(src)
conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
conn.execute("PRAGMA journal_mode=DELETE")
conn.execute("VACUUM")
rows = conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
conn.close()
shutil.copyfile(src, dst)
print(f"recorded {rows} responses into {dst}")
PY
echo "next: bash scripts/nbval.sh $name, then commit $target"
