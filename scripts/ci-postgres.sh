#!/usr/bin/env bash
# Start the machine's local PostgreSQL and create the test role and database (idempotent).
#
# Usage:  eval "$(scripts/ci-postgres.sh)"    # exports CONVOEVAL_TEST_POSTGRES_URL for the Postgres tests
#
# Everything but the final export line goes to stderr, so the script can be eval'ed.
# Override with PG_VERSION, PG_CLUSTER, PG_PORT, PG_ROLE, PG_PASSWORD, PG_DB.
set -euo pipefail

PG_VERSION="${PG_VERSION:-15}"
PG_CLUSTER="${PG_CLUSTER:-main}"
PG_PORT="${PG_PORT:-5432}"
PG_ROLE="${PG_ROLE:-root}"
PG_PASSWORD="${PG_PASSWORD:-root}"
PG_DB="${PG_DB:-convoeval_test}"

log() { echo "ci-postgres: $*" >&2; }

as_postgres() {
    # Run as the postgres OS user whether we are root or already postgres.
    if [ "$(id -un)" = "postgres" ]; then "$@"; else su postgres -c "$(printf '%q ' "$@")"; fi
}

if ! pg_lsclusters -h 2>/dev/null | awk -v v="$PG_VERSION" -v c="$PG_CLUSTER" '$1==v && $2==c && $4=="online"' | grep -q .; then
    log "starting cluster $PG_VERSION/$PG_CLUSTER"
    pg_ctlcluster --skip-systemctl-redirect "$PG_VERSION" "$PG_CLUSTER" start >&2
fi

for _ in $(seq 1 30); do
    pg_isready -q -h 127.0.0.1 -p "$PG_PORT" && break
    sleep 1
done
pg_isready -q -h 127.0.0.1 -p "$PG_PORT" || { log "PostgreSQL is not accepting connections on port $PG_PORT"; exit 1; }

psql_admin() { as_postgres psql -p "$PG_PORT" -v ON_ERROR_STOP=1 -qtAX "$@"; }

if [ "$(psql_admin -c "SELECT 1 FROM pg_roles WHERE rolname = '$PG_ROLE'")" != "1" ]; then
    log "creating role $PG_ROLE"
    psql_admin -c "CREATE ROLE \"$PG_ROLE\" SUPERUSER LOGIN PASSWORD '$PG_PASSWORD'" >&2
fi
if [ "$(psql_admin -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" != "1" ]; then
    log "creating database $PG_DB"
    as_postgres createdb -p "$PG_PORT" -O "$PG_ROLE" "$PG_DB" >&2
fi

echo "export CONVOEVAL_TEST_POSTGRES_URL=postgresql://$PG_ROLE:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
