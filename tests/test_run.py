"""stormcf.run: one run context carries the time limit, the stop request and the progress reporter all the way down,
for the Python API as for the command line."""
import io
import threading

import pytest

import stormcf
from stormcf.console import NORMAL, Reporter
from stormcf.errors import TimeLimitReached
from stormcf.explain import ExplanationProblem, explain_path
from stormcf.interrupt import Interrupted
from stormcf.run import Run

from cpu_clock import tree_cpu_seconds


@pytest.fixture(scope="module")
def sepsis_path():
    model = stormcf.load_model(stormcf.example_path("sepsis.prism"))
    return stormcf.ObservedPath.load(model, stormcf.example_path("sepsis.sampled.json"))


def test_a_time_limit_given_in_python_bounds_the_whole_solve_and_gives_the_best_answer(sepsis_path):
    """explain_path(..., time_limit=2) with 200,000 Monte Carlo samples per row: the old code ignored a deadline
    passed to it below the top layer and ran for more than 900 s, then raised TimeLimitReached; now it answers
    within the limit with the samples that fitted, says so, and the answer is a run's with that many samples."""
    problem = ExplanationProblem(sepsis_path, "r", k=1, estimator="mc", samples=200_000)
    start = tree_cpu_seconds()
    result = explain_path(problem, explanations=100, time_limit=2)
    assert tree_cpu_seconds() - start < 20            # CPU seconds: the machine's load does not count
    used = result.problem.samples
    assert 8 <= used < 200_000 and result.samples_requested == 200_000 and result.approximate
    assert f"d = {used} of the requested 200000 samples" in result.notes[0] and "time limit of 2 s" in result.notes[0]
    assert result.payload()["estimator"] == {"name": "mc", "samples": used, "seed": 0, "samples_requested": 200_000}
    assert result.check("policy").agrees               # Storm's value of the reported policy
    again = explain_path(ExplanationProblem(sepsis_path, "r", k=1, estimator="mc", samples=used), explanations=100)
    assert again.value == result.value and again.samples_requested is None


def test_a_time_limit_too_short_for_any_answer_says_so(sepsis_path):
    problem = ExplanationProblem(sepsis_path, "r", k=1, estimator="mc", samples=1000)
    with pytest.raises(TimeLimitReached, match="the time limit of 0.01 s was reached during"):
        explain_path(problem, time_limit=0.01)


def test_a_time_limit_that_fits_the_requested_samples_changes_nothing():
    model = stormcf.load_model(stormcf.example_path("treat.prism"))
    path = stormcf.ObservedPath.load(model, stormcf.example_path("treat.path.json"))
    problem = ExplanationProblem(path, "health", k=1, estimator="mc", samples=200)
    limited, free = explain_path(problem, time_limit=600), explain_path(problem)
    assert limited.samples_requested is None and limited.problem.samples == 200 and limited.value == free.value


def test_a_run_passed_in_python_is_the_one_every_layer_reads(sepsis_path):
    """The same, with an explicit run: stop() from another thread ends the Monte Carlo loop at its next block."""
    problem = ExplanationProblem(sepsis_path, "r", k=1, estimator="mc", samples=200_000)
    run = Run(None, reporter=Reporter(NORMAL, io.StringIO()))
    timer = threading.Timer(1.0, run.stop)
    timer.start()
    start = tree_cpu_seconds()
    try:
        with pytest.raises(Interrupted):            # stopped without an answer
            explain_path(problem, run=run)
    finally:
        timer.cancel()
    assert run.interrupted and tree_cpu_seconds() - start < 20


def test_a_run_stopped_before_it_has_an_answer_says_so(loan, impatient):
    """Run.stop() is the Python user's Ctrl-C: stopped before the pre-analysis ends, a counterfactual search has no
    answer to report and raises Interrupted (a stopped search with a checked strategy reports it: test_cf_interrupt)."""
    problem = stormcf.CounterfactualProblem(impatient, 'P<=0.2 [F "rejected"]')
    run = Run(None, reporter=Reporter(NORMAL, io.StringIO()))
    run.stop()
    with pytest.raises(Interrupted):
        stormcf.solve_counterfactual(problem, run=run)


def test_messages_name_the_limit_the_user_gave():
    run = Run(8)
    item = run.sub(seconds=0.0001, limit="the item time limit of 2 s")
    share = run.sub(seconds=0.0001)
    with pytest.raises(TimeLimitReached, match="^the item time limit of 2 s was reached during solving$"):
        while True:
            item.check("solving")
    with pytest.raises(TimeLimitReached, match="^the time limit of 8 s was reached during a phase$"):
        while True:
            share.check("a phase")
    worker = Run.until(run.until_time(), run.limit)           # a batch worker rebuilds the run from its end
    assert worker.limit == "the time limit of 8 s" and worker.remaining() <= 8


def test_run_of_builds_or_bounds_a_run():
    assert Run.of().limited is False and Run.of(time_limit=3).seconds == pytest.approx(3)
    outer = Run(100)
    assert Run.of(outer) is outer
    inner = Run.of(outer, time_limit=5)
    assert inner.remaining() <= 5 and inner.reporter is outer.reporter and inner.limit == "the time limit of 5 s"
    outer.stop()
    assert inner.interrupted and inner.expired
    with pytest.raises(TypeError, match="time_limit= for seconds"):
        Run.of(5)


def test_the_active_run_is_what_the_storm_bridge_reads():
    run = Run(60)
    assert Run.active_run() is None
    with run.active():
        assert Run.current() is run and Run.active_run() is run
        with run.sub(seconds=1).active() as inner:
            assert Run.current() is inner
        assert Run.current() is run
    assert Run.active_run() is None and Run.current() is not run
