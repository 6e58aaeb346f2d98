#!/usr/bin/env bash
# Builds the Dockerfile and runs the image offline, on machines without a container registry (podman and a locally
# bootstrapped debian:bookworm-slim, through ../shared/tools/container); too slow for every CI run (minutes).
# Checks: the demo (text and one JSON document), --version, the unprivileged user without a mount, the README's
# mounted runs that write files (a directory of root's, one of another user's: the files belong to the directory's
# owner; and `-u UID:GID`), a read-only mounted model, the shipped examples copied out, the exit code on bad input.
# Usage: scripts/container_smoke.sh [TOOLS_DIR]      (default: ../shared/tools/container beside the checkout)
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${1:-../shared/tools/container}
"$tools/setup"
"$tools/build" -t stormcf:local .
run() { "$tools/run" "$@"; }
fail() { echo "container smoke test: $*" >&2; exit 1; }
out=$(run stormcf:local demo)
grep -q "411/1000" <<<"$out" || fail "demo output lacks 411/1000"
run stormcf:local --version
run stormcf:local demo --json - | python3 -c 'import json, sys; assert json.load(sys.stdin)["command"] == "demo"'
[ "$(run --entrypoint stormcf-entrypoint stormcf:local id -u)" = 1000 ] || fail "without a mount, stormcf runs as root"
run -v "$PWD/prism_models:/models:ro" stormcf:local check /models/loan.prism \
    --strategy /models/loan.impatient.json --prop 'P=? [F "rejected"]' --exact | grep -q "411/1000"
run stormcf:local info /nonexistent.prism 2>/dev/null && fail "bad input did not fail"

work=$(mktemp -d "${TMPDIR:-/tmp}/stormcf-container.XXXXXX")
trap 'rm -rf "$work"' EXIT
check=(check prism_models/loan.prism -s prism_models/loan.impatient.json -p 'P=? [F "rejected"]' --json out.json)
owned_by() {   # owned_by DIR UID: a mounted run as in the README writes DIR/out.json, which belongs to UID
    (cd "$1" && run -v "$PWD:/work" -w /work stormcf:local "${check[@]}" >/dev/null) || fail "mounted run in $1 failed"
    python3 -c 'import json, sys; assert json.load(open(sys.argv[1]))["command"] == "check"' "$1/out.json"
    [ "$(stat -c %u "$1/out.json")" = "$2" ] || fail "$1/out.json belongs to uid $(stat -c %u "$1/out.json"), not $2"
}
mkdir "$work/mine"
owned_by "$work/mine" "$(id -u)"
echo "mounted run in a directory of uid $(id -u): out.json written, owned by uid $(id -u)"
if [ "$(id -u)" = 0 ]; then
    mkdir "$work/other" && chown 1234:1234 "$work/other"
    owned_by "$work/other" 1234
    echo "mounted run in a directory of uid 1234: out.json written, owned by uid 1234"
fi
mkdir "$work/user" && chmod 0777 "$work/user"
(cd "$work/user" && run -u 4321:4321 -v "$PWD:/work" -w /work stormcf:local "${check[@]}" >/dev/null)
[ "$(stat -c %u "$work/user/out.json")" = 4321 ] || fail "-u 4321:4321 did not write out.json as uid 4321"
echo "mounted run with -u 4321:4321: out.json written, owned by uid 4321"
mkdir "$work/examples"
(cd "$work/examples" && run -v "$PWD:/work" -w /work stormcf:local examples --copy . >/dev/null)
[ -f "$work/examples/prism_models/loan.prism" ] || fail "examples --copy . wrote no prism_models/loan.prism"
echo "container smoke test passed: demo (text and one JSON document), --version, the unprivileged user, mounted runs" \
     "that write files (owned by the directory's owner; -u), a read-only mounted model, examples --copy, exit code on" \
     "bad input"
