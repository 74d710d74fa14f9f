#!/usr/bin/env bash
# Run every benchmark once, in order; each prints its tables and writes benchmarks/results/<name>.json.
# About 45 minutes on 2 cores (the one-at-a-time sweep alone takes ~6 minutes, the 5,000-conversation scale
# sweep ~8, the peer comparison ~15). Everything talks to servers on 127.0.0.1 only, and each benchmark stops by
# itself. `peers` makes benchmarks/.venv-peers first if missing; `profile_peers` (py-spy) runs only when named.
#
#   bash benchmarks/run_all.sh              # all of them
#   bash benchmarks/run_all.sh overhead replay   # only these
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
"$PY" -c "import pyinstrument" 2>/dev/null || "$PY" -m pip install --quiet pyinstrument  # the overhead profile

all=(overhead concurrency replay scale local_model peers workers)
wanted=("${@:-${all[@]}}")
for name in "${wanted[@]}"; do
  echo "== $name ($(date -u +%H:%M:%S) UTC, load $(cut -d' ' -f1-3 /proc/loadavg))"
  case "$name" in
    overhead)    timeout 900  "$PY" benchmarks/bench_overhead.py ;;
    concurrency) timeout 1800 "$PY" benchmarks/bench_concurrency.py ;;
    replay)      timeout 600  "$PY" benchmarks/bench_replay.py ;;
    scale)       timeout 2400 "$PY" benchmarks/bench_scale.py ;;
    local_model) timeout 1800 "$PY" benchmarks/bench_local_model.py ;;
    peers)       [ -x benchmarks/.venv-peers/bin/python ] || bash benchmarks/peers/setup.sh  # openevals, apart
                 timeout 3600 "$PY" benchmarks/bench_peers.py ;;
    profile_peers) timeout 1200 "$PY" benchmarks/profile_peers.py ;;  # needs py-spy (--py-spy PATH); not in "all"
    workers)     timeout 2400 "$PY" benchmarks/bench_workers.py ;;  # says so and exits 0 without --workers/--cluster
    compare_sim) timeout 3600 "$PY" benchmarks/bench_compare_sim.py ;;  # statistics, not speed; not in "all"
    *) echo "unknown benchmark: $name (expected one of: ${all[*]})" >&2; exit 2 ;;
  esac
done
