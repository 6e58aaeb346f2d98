"""Regenerates the small logs in tests/data/ (their provenance; tests/learn/test_data.py checks they are current).

    python tests/learn/make_data.py

- ``loan_paired.csv``: 300 cases sampled from prism_models/loan.prism under prism_models/loan.impatient.json
  (``stormcf.learn.sample_log``, seed 0), paired form;
- ``loan_activity.csv`` / ``loan_activity.xes``: the same cases as an activity log: every action except the
  provider's ``Provider`` and every observation is an activity (so the provider's step is an implicit ``continue``),
  with a timestamp one minute after the previous event (cases start on 2024-01-01, one hour apart);
- ``names.csv``: a paired log whose event names need sanitising (spaces, quotes, leading digits, accents, PRISM
  keywords, two names that sanitise alike).
"""
from __future__ import annotations

import csv
from datetime import datetime, timedelta, timezone
from pathlib import Path
from xml.sax.saxutils import quoteattr

import stormcf
from stormcf.learn import sample_log

DATA = Path(__file__).resolve().parents[1] / "data"
LOAN_ACTIONS = ("Apply", "Consult", "Quit", "Submit")


def loan_log():
    model = stormcf.load_model(stormcf.example_path("loan.prism")).with_naming("labels")
    sigma = stormcf.Strategy.load(model, stormcf.example_path("loan.impatient.json"))
    return sample_log(model, sigma, 300, seed=0)


def activity_events(log) -> list[tuple[str, str, str]]:
    """(case, activity, ISO timestamp) rows of the loan log in the activity form."""
    start = datetime(2024, 1, 1, tzinfo=timezone.utc)
    rows = []
    for c, case in enumerate(log.case_ids):
        o0, steps = log.case(c)
        events = [o0] + [e for a, o in steps for e in ((a, o) if a != "Provider" else (o,))]
        for k, e in enumerate(events):
            rows.append((case, e, (start + timedelta(hours=c, minutes=k)).isoformat()))
    return rows


NAMES = [
    ("c1", "", "2nd offer"), ("c1", "A_Create Application", "Überprüfung"), ("c1", "true", 'said "no"'),
    ("c2", "", "2nd offer"), ("c2", "A_Create Application", "said 'no'"), ("c2", "module", "init"),
    ("c3", "", "2nd offer"), ("c3", "true", "Überprüfung"), ("c3", "A_Create-Application", "deadlock"),
]


def main() -> None:
    log = loan_log()
    log.to_csv(DATA / "loan_paired.csv")
    rows = activity_events(log)
    with open(DATA / "loan_activity.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(("case", "activity", "timestamp"))
        w.writerows(rows)
    lines = ['<?xml version="1.0" encoding="UTF-8" ?>', '<log xes.version="1.0" xmlns="http://www.xes-standard.org/">']
    for case in log.case_ids:
        lines.append(f'  <trace><string key="concept:name" value={quoteattr(case)}/>')
        lines += [f'    <event><string key="concept:name" value={quoteattr(a)}/>'
                  f'<date key="time:timestamp" value="{t}"/></event>' for c, a, t in rows if c == case]
        lines.append("  </trace>")
    (DATA / "loan_activity.xes").write_text("\n".join(lines + ["</log>"]) + "\n", encoding="utf-8")
    with open(DATA / "names.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(("case", "action", "observation"))
        w.writerows(NAMES)


if __name__ == "__main__":
    main()
