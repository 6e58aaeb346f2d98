#!/usr/bin/env bash
# Builds the Dockerfile, measures the image and runs it; too slow for every CI run (minutes).
# Checks: the image's size (at most MAX_MB; printed with the virtual environment's), the demo (text and one JSON
# document), --version, the unprivileged user without a mount, the README's mounted runs that write files (a
# directory of root's, one of another user's: the files belong to the directory's owner; and `-u UID:GID`), a
# read-only mounted model, the shipped examples copied out, the exit code on bad input; with PyTorch in the image
# (EXTRAS=all), that it is the CPU build and trains a set-cover network.
# Usage: scripts/container_smoke.sh [TOOLS_DIR]
#   Without TOOLS_DIR: `docker build` and `docker run` (or podman's, when docker is not installed).
#   TOOLS_DIR: a folder with `build [-t TAG] [-f FILE] CONTEXT` and `run [OPTIONS] IMAGE [ARGS]` scripts, for
#   machines whose container engine needs wrapping (no registry: a locally bootstrapped base image).
# Environment: EXTRAS and TORCH_INDEX, the Dockerfile's build arguments (default: its own); MAX_MB (default 1500,
# or 2500 with EXTRAS=all).
set -euo pipefail
cd "$(dirname "$0")/.."
tools=${1:-}
extras=${EXTRAS:-}
max_mb=${MAX_MB:-$([[ $extras == *all* || $extras == *learn* ]] && echo 2500 || echo 1500)}
tag=stormcf:smoke
engine=$(command -v docker || command -v podman || true)
fail() { echo "container smoke test: $*" >&2; exit 1; }
[ -n "$tools" ] || [ -n "$engine" ] || fail "neither docker nor podman is installed (or give TOOLS_DIR)"
dockerfile=$(mktemp "${TMPDIR:-/tmp}/Dockerfile.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/stormcf-container.XXXXXX")
trap 'rm -rf "$work" "$dockerfile"' EXIT
# the build arguments, as defaults of a copy of the Dockerfile (wrapped builds take no --build-arg)
sed -E "${extras:+s|^ARG EXTRAS=.*|ARG EXTRAS=$extras|;}${TORCH_INDEX:+s|^ARG TORCH_INDEX=.*|ARG TORCH_INDEX=$TORCH_INDEX|}" \
    Dockerfile > "$dockerfile"
if [ -n "$tools" ]; then
    "$tools/setup"
    build() { "$tools/build" -t "$tag" -f "$dockerfile" .; }
    run() { "$tools/run" "$@"; }
    size() { CONTAINERS_CONF="$tools/containers.conf" podman image inspect --format '{{.Size}}' "$tag"; }
else
    build() { "$engine" build -t "$tag" -f "$dockerfile" .; }
    run() { "$engine" run --rm --network=none "$@"; }
    size() { "$engine" image inspect --format '{{.Size}}' "$tag"; }
fi
start=$SECONDS
build
echo "built $tag in $((SECONDS - start)) s"
image_mb=$(( $(size) / 1000000 ))
venv_mb=$(run --entrypoint du "$tag" -sm /opt/stormcf | cut -f1)
echo "image size: $image_mb MB (at most $max_mb MB), of which the virtual environment /opt/stormcf: $venv_mb MB"
[ "$image_mb" -le "$max_mb" ] || fail "the image has $image_mb MB, more than $max_mb MB"

out=$(run "$tag" demo)
grep -q "411/1000" <<<"$out" || fail "demo output lacks 411/1000"
run "$tag" --version
run "$tag" demo --json - | python3 -c 'import json, sys; assert json.load(sys.stdin)["command"] == "demo"'
[ "$(run --entrypoint stormcf-entrypoint "$tag" id -u)" = 1000 ] || fail "without a mount, stormcf runs as root"
run -v "$PWD/prism_models:/models:ro" "$tag" check /models/loan.prism \
    --strategy /models/loan.impatient.json --prop 'P=? [F "rejected"]' --exact | grep -q "411/1000"
run "$tag" info /nonexistent.prism 2>/dev/null && fail "bad input did not fail"
run "$tag" schema | python3 -c 'import json, sys; assert json.load(sys.stdin)["$id"] == "urn:stormcf:schema:stormcf-1"'

check=(check prism_models/loan.prism -s prism_models/loan.impatient.json -p 'P=? [F "rejected"]' --json out.json)
owned_by() {   # owned_by DIR UID: a mounted run as in the README writes DIR/out.json, which belongs to UID
    (cd "$1" && run -v "$PWD:/work" -w /work "$tag" "${check[@]}" >/dev/null) || fail "mounted run in $1 failed"
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
(cd "$work/user" && run -u 4321:4321 -v "$PWD:/work" -w /work "$tag" "${check[@]}" >/dev/null)
[ "$(stat -c %u "$work/user/out.json")" = 4321 ] || fail "-u 4321:4321 did not write out.json as uid 4321"
echo "mounted run with -u 4321:4321: out.json written, owned by uid 4321"
mkdir "$work/examples"
(cd "$work/examples" && run -v "$PWD:/work" -w /work "$tag" examples --copy . >/dev/null)
[ -f "$work/examples/prism_models/loan.prism" ] || fail "examples --copy . wrote no prism_models/loan.prism"
if run --entrypoint python3 "$tag" -c 'import torch' 2>/dev/null; then
    run --entrypoint python3 "$tag" -c 'import torch; assert torch.version.cuda is None, torch.version.cuda' \
        || fail "the image's PyTorch is a CUDA build"
    mkdir "$work/learn" && chmod 0777 "$work/learn"
    (cd "$work/learn" && run -v "$PWD:/work" -w /work "$tag" setcover-data d.npz -n 8 -A 12 --draws 500 >/dev/null \
        && run -v "$PWD:/work" -w /work "$tag" setcover-learn d.npz --generator mc --hidden 8 --epochs 2 \
           --out mc.npz >/dev/null) || fail "setcover-learn --generator mc failed"
    echo "PyTorch in the image: the CPU build; setcover-learn --generator mc trains"
fi
echo "container smoke test passed: the image ($image_mb MB), demo (text and one JSON document), --version, the" \
     "unprivileged user, mounted runs that write files (owned by the directory's owner; -u), a read-only mounted" \
     "model, examples --copy, the JSON Schema, exit code on bad input"
