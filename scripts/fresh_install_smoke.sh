#!/usr/bin/env bash
# A plain `pip install .` (the core: Storm, scipy's HiGHS and SCIP; no Gurobi, highspy, matplotlib, dask) in a fresh
# virtual environment: the core install certifies `stormcf demo`'s headline counterfactual (status optimal), and every
# documented stormcf command (README.md and docs/, `sh` blocks; tests/doc_commands.py) runs as written in an empty
# directory, the shipped examples included; commands that need an extra (--plot, --backend dask, .xes logs, --dot
# x.png) are skipped. Takes a few minutes (stormpy's wheel is installed into the new environment), so it is a script
# that CI runs after the tests. Prints the size of the core install.
# Usage: scripts/fresh_install_smoke.sh [PYTHON]        (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
python=${1:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/stormcf-fresh.XXXXXX")
trap 'rm -rf "$venv"' EXIT
fail() { echo "fresh install smoke test: $*" >&2; exit 1; }
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet . 2>&1 | grep -v "is ignored" || true
for extra in gurobipy highspy matplotlib distributed pm4py torch; do
    if "$venv/bin/python" -c "import $extra" 2>/dev/null; then fail "the core install has $extra: it must be an extra"; fi
done
"$venv/bin/python" -c "import pyscipopt, pydot" || fail "the core install lacks pyscipopt or pydot"
echo "core install: $(du -sm "$venv" | cut -f1) MB (the whole virtual environment, pip included)"
cd "$venv"                                        # no checkout beside: the shipped example inputs are used
demo=$("$venv/bin/stormcf" demo)
grep -q "411/1000" <<<"$demo" || fail "demo output lacks 411/1000"
headline=$(grep -m1 "^status:" <<<"$demo")
[[ $headline == "status: optimal"* ]] || fail "the demo's headline counterfactual is not certified: $headline"
echo "demo's headline counterfactual: ${headline:0:60}..."
"$venv/bin/python" "$repo/tests/doc_commands.py" --stormcf "$venv/bin/stormcf" --without plot,dask,xes,graphviz,learn \
    || fail "a documented command failed on the core install"
echo "fresh install smoke test passed: the core install certifies the demo and runs every documented command"
