"""The user's request to stop (the first Ctrl-C, stormcf.interrupt) ends a counterfactual solve at its next safe
point: the best strategy Storm accepted so far, status ``interrupted`` (issue 9, "Long work can be stopped")."""
import threading
import time
from pathlib import Path

import pytest
from cpu_clock import tree_cpu_seconds

import stormcf
from stormcf import interrupt
from stormcf.counterfactual import CounterfactualProblem, solve_counterfactual
from stormcf.deadline import Deadline

QVBS = Path(__file__).parents[1] / "data" / "qvbs"



@pytest.fixture
def stop_after():
    timers = []

    def start(seconds: float) -> None:
        timers.append(threading.Timer(seconds, interrupt.request))
        timers[-1].start()
    yield start
    for timer in timers:
        timer.cancel()
    interrupt.clear()


def test_a_stop_request_returns_the_best_checked_strategy_at_once(stop_after):
    """consensus.4 (22,656 states), mixed objective: with a 120 s limit the solve uses all of it (the d0 MILP does
    not close); a request after 8 s ends it within seconds (the solvers in child processes are stopped) with the
    best strategy Storm accepted. Compared in CPU seconds of the process tree (13 s measured): an unstopped solve
    would spend about 112 more. The exact check, which rational arithmetic can make long, is not started after
    the request (the answer says so), and no note blames the time limit, which did not stop anything."""
    prop = 'P<=0.02 [F "finished" & !"agree"]'
    model = stormcf.load_model(QVBS / "consensus.4.prism", constants="K=2")
    problem = CounterfactualProblem(stormcf.Strategy.uniform(model), prop)
    stop_after(8.0)
    start = tree_cpu_seconds()
    r = solve_counterfactual(problem, time_limit=120, exact=True)
    assert tree_cpu_seconds() - start < 40
    assert r.status == "interrupted" and any("user's request" in note for note in r.notes)
    assert r.verification.holds and r.probability <= 0.02 and r.verification.agrees in (True, None)
    assert r.exact_checks == [] and "the exact check was not completed (the user's Ctrl-C)" in " ".join(r.notes)
    assert not any("time limit" in note or "status timeout" in note for note in r.notes), r.notes


def test_a_deadline_ends_when_the_user_asks_to_stop(stop_after):
    deadline = Deadline(None)
    assert not deadline.expired and deadline.remaining() == float("inf")
    interrupt.request()
    assert deadline.expired and deadline.remaining() == 0.0 and deadline.sub(seconds=5).expired
    with pytest.raises(KeyboardInterrupt):
        deadline.check("the pre-analysis")


def test_ctrl_c_on_the_command_line_reports_the_best_checked_strategy(tmp_path):
    """stormcf strategy on consensus.4 with a 120 s limit: the first SIGINT (after 10 s) stops the solvers and the
    JSON says interrupted, with Storm's check of the strategy; exit code 0, nothing else written."""
    import json
    import signal
    import subprocess
    import sys

    prop = 'P<=0.02 [F "finished" & !"agree"]'
    out = tmp_path / "cf.json"
    uniform = tmp_path / "uniform.json"
    model = str(QVBS / "consensus.4.prism")
    subprocess.run([sys.executable, "-m", "stormcf", "strategy-file", model, "-c", "K=2", "--uniform", "--out",
                    str(uniform)], check=True, capture_output=True)
    cpu = tree_cpu_seconds()
    proc = subprocess.Popen([sys.executable, "-m", "stormcf", "strategy", model, "-c", "K=2", "-s", str(uniform),
                             "-p", prop, "--time-limit", "120", "--json", str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(10)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert tree_cpu_seconds() - cpu < 50            # the whole command (18 s measured); unstopped: about 110 s more
    assert proc.returncode == 0, stderr
    assert "stopping at the next safe point" in stderr
    doc = json.loads(out.read_text())
    assert doc["status"] == "interrupted"
    initial, answer = doc["checks"]                                  # σ's value, then the counterfactual's
    assert not initial["holds"] and answer["holds"] and answer["value"] <= 0.02
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cf.json", "uniform.json"]
