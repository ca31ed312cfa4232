#!/usr/bin/env bash
# Quick start, command 2: install drivemt with its test tools into .venv (pip only) and run every
# check: ruff, mypy and the whole pytest suite (slow tests included: real nats-server, Qdrant local
# mode, MiniLM, daemon processes, kill -9 recovery). Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/venv.sh
echo "== ruff" && .venv/bin/ruff check . && .venv/bin/ruff format --check .
echo "== mypy" && .venv/bin/mypy
# The browser test of `drivemt tui --serve` needs Debian's Chromium; as root (as in CI) it is installed here.
if ! command -v chromium >/dev/null && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "== installing chromium and chromium-driver (browser test of drivemt tui --serve)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver >/dev/null; } ||
    echo "chromium could not be installed: the browser test will skip and say why"
fi
echo "== pytest" && exec .venv/bin/python -m pytest "$@"
