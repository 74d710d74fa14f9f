#!/usr/bin/env bash
# Runs the test suite. Uses CONVOEVAL_TEST_POSTGRES_URL when set; otherwise starts the machine's local
# PostgreSQL cluster if there is one (scripts/ci-postgres.sh) so the Postgres backend is tested for real.
set -uo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CONVOEVAL_TEST_POSTGRES_URL:-}" ] && command -v pg_ctlcluster >/dev/null 2>&1; then
    if url_line=$(bash scripts/ci-postgres.sh 2>/tmp/convoeval-ci-postgres.log); then
        eval "$url_line"
    else
        echo "note: could not start the local PostgreSQL (see /tmp/convoeval-ci-postgres.log); Postgres tests will be skipped" >&2
    fi
fi
# Lint first: ruff (pyflakes, import order, docstrings; configured in pyproject.toml) fails fast and cheap.
VENV="${VENV:-.venv}"  # make test-latest runs the same suite in .venv-latest
if ! "$VENV/bin/ruff" check .; then
    echo "error: ruff check failed (fix the lines above, or 'ruff check --fix .' for import order)" >&2
    exit 1
fi
# Types: mypy on convoeval/, every module (configured in pyproject.toml: warn_return_any, warn_unused_ignores).
if ! "$VENV/bin/mypy"; then
    echo "error: mypy failed (fix the lines above: no module is skipped)" >&2
    exit 1
fi
"$VENV/bin/python" -m pytest "$@"
rc=$?
if [ "$rc" -eq 5 ]; then
    echo "error: pytest collected no tests" >&2
    exit 1
fi
exit "$rc"
