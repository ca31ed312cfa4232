#!/usr/bin/env bash
# Quick start, command 2: install drivemt with its test tools into .venv (pip only) and run every
# check: ruff, mypy and the whole pytest suite (slow tests included: real nats-server, Qdrant local
# mode, MiniLM, daemon processes, kill -9 recovery). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/venv.sh
echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy" && .venv/bin/mypy
echo "== pytest" && exec .venv/bin/python -m pytest "$@"
