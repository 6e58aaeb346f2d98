#!/usr/bin/env bash
# Builds the Dockerfile and runs the image offline, on machines without a container registry (podman and a locally
# bootstrapped debian:bookworm-slim, through ../shared/tools/container); too slow for every CI run (minutes).
# Usage: scripts/container_smoke.sh [TOOLS_DIR]      (default: ../shared/tools/container beside the checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${1:-../shared/tools/container}
"$tools/setup"
"$tools/build" -t stormcf:local .
out=$("$tools/run" stormcf:local demo)
grep -q "411/1000" <<<"$out" || { echo "demo output lacks 411/1000" >&2; exit 1; }
"$tools/run" stormcf:local --version
"$tools/run" stormcf:local demo --json - | python3 -c 'import json, sys; assert json.load(sys.stdin)["command"] == "demo"'
[ "$("$tools/run" --entrypoint id stormcf:local -u)" != 0 ] || { echo "the image runs as root" >&2; exit 1; }
"$tools/run" -v "$PWD/prism_models:/models:ro" stormcf:local check /models/loan.prism \
    --strategy /models/loan.impatient.json --prop 'P=? [F "rejected"]' --exact | grep -q "411/1000"
"$tools/run" stormcf:local info /nonexistent.prism 2>/dev/null && { echo "bad input did not fail" >&2; exit 1; }
echo "container smoke test passed: demo (text and one JSON document), --version, non-root user, mounted model, exit code on bad input"
