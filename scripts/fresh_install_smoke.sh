#!/usr/bin/env bash
# A plain `pip install .` (no extras: no Gurobi, SCIP, highspy, matplotlib) in a fresh virtual environment runs the
# headline commands: `stormcf demo` and `stormcf strategy` solve with HiGHS through scipy. Takes a minute or two (the
# stormpy wheel is installed into the new environment), so it is a script that CI runs after the tests.
# Usage: scripts/fresh_install_smoke.sh [PYTHON]        (default: python3)
set -euo pipefail
cd "$(dirname "$0")/.."
python=${1:-python3}
venv=$(mktemp -d "${TMPDIR:-/tmp}/stormcf-fresh.XXXXXX")
trap 'rm -rf "$venv"' EXIT
"$python" -m venv "$venv"
"$venv/bin/pip" install --quiet . 2>&1 | grep -v "is ignored" || true
for extra in gurobipy pyscipopt highspy matplotlib; do
    if "$venv/bin/python" -c "import $extra" 2>/dev/null; then
        echo "the core install has $extra: it must be an extra" >&2; exit 1
    fi
done
cd "$venv"                                        # no checkout beside: the shipped example models are used
demo=$("$venv/bin/stormcf" demo)
grep -q "411/1000" <<<"$demo" || { echo "demo output lacks 411/1000" >&2; exit 1; }
grep -q "status: optimal" <<<"$demo" || { echo "the demo's counterfactuals are not optimal without extras" >&2; exit 1; }
json=$("$venv/bin/stormcf" strategy prism_models/loan.prism --strategy prism_models/loan.impatient.json \
    --prop 'P<=0.2 [F "rejected"]' --json -)
"$venv/bin/python" - "$json" <<'PY'
import json, sys
doc = json.loads(sys.argv[1])
assert doc["command"] == "strategy" and doc["checks"], doc
print(f"strategy without extras: status {doc['status']}, Storm's value {doc['checks'][0]['value']}")
PY
echo "fresh install smoke test passed: demo and strategy run from the core install (HiGHS through scipy)"
