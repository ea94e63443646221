#!/usr/bin/env bash
# Run `nl2sql-secrets` with the given arguments: from the repo's .venv if present, else from PATH.
# Example: scripts/secrets.sh set-db-password shop --config dbs.yaml
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ -x "$repo/.venv/bin/nl2sql-secrets" ]]; then
    exec "$repo/.venv/bin/nl2sql-secrets" "$@"
fi
exec nl2sql-secrets "$@"
