"""Storm calls that cannot hang a command (stormcf.storm.isolate, stormcf.storm.check): model checking in forked child
processes stopped at the deadline, and fallback engines when value iteration crawls (issue 21: frozenlake4's
counterfactual strategy check ran for minutes inside Storm's optimistic value iteration).

Time bounds here are generous (several times what the work needs): what they catch is a call that never returns."""
import importlib
import os
import signal
import subprocess
import sys
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from cpu_clock import tree_cpu_seconds

import stormcf
from stormcf import interrupt
from stormcf.run import Run
from stormcf.errors import PropertyError, TimeLimitReached
from stormcf.storm.isolate import Engine, StormCrash, first_answer, in_thread, isolated
from stormcf.verify import check_model, check_strategy

#: the module stormcf.storm.check (its name is shadowed by the function stormcf.storm.check)
CHECK = importlib.import_module("stormcf.storm.check")
DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def test_a_stiff_dtmc_is_answered_exactly_instead_of_crawling():
    """prism_models/stiff.pm leaves a two-state cycle with probability 1e-9 per step: value iteration at relative
    precision 1e-10 would need about 1e10 sweeps. The fallback answers in exact arithmetic: 1 / (2 - 1e-9)."""
    model = stormcf.load_model(stormcf.example_path("stiff.pm"))
    with Run(120).active():                   # a crawl would end here as TimeLimitReached, failing the test
        check = check_model(model, 'P=? [F "bad"]')
    assert check.method == CHECK.EXACT
    assert check.exact == Fraction(10**9, 2 * 10**9 - 1)


@pytest.mark.parametrize("prop", ['S=? ["good"]', 'LRA=? ["good"]'])
def test_long_run_averages_of_a_stiff_dtmc_fall_back_too(prop):
    """Issue 37: Storm's long-run average solver crawled on stiff.pm (S=? ran into any time limit) because the
    fallbacks covered reachability only. The steady-state probability of "good" is (1 - 1e-9) / (2 - 1e-9)."""
    model = stormcf.load_model(stormcf.example_path("stiff.pm"))
    with Run(60).active():
        check = check_model(model, prop)
    assert check.method == CHECK.EXACT
    assert check.exact == Fraction(10**9 - 1, 2 * 10**9 - 1)


def test_sparse_lu_answers_where_exact_arithmetic_is_not_tried(monkeypatch):
    """On models too large for exact arithmetic, Storm's sparse LU solves answer what value iteration crawls on
    (the grid with 10^5 states of issue 37, here stiff.pm with the exact fallback switched off); floating point on a
    system of condition about 1e9 (two states leave their cycle with probability 1e-9) loses about 7 digits."""
    monkeypatch.setattr(CHECK, "EXACT_FALLBACK_STATES", 0)
    model = stormcf.load_model(stormcf.example_path("stiff.pm"))
    with Run(60).active():
        reach = check_model(model, 'P=? [F "bad"]')
        steady = check_model(model, 'S=? ["good"]')
    assert reach.method == steady.method == CHECK.SPARSE_LU
    assert reach.value == pytest.approx(1 / (2 - 1e-9), rel=1e-6)
    assert steady.value == pytest.approx((1 - 1e-9) / (2 - 1e-9), rel=1e-6)


@pytest.mark.parametrize("prop", ['Pmax=? [F "rejected"]', 'Rmin=? [F "granted" | "rejected"]',
                                  'LRAmax=? ["granted"]', 'Pmin=? [F "granted" || F "rejected"]'])
def test_sparse_lu_agrees_with_the_sound_engines_on_an_mdp(prop):
    """Storm's sparse LU solves (policy iteration on MDPs) give the values of the sound engines on loan.prism, for
    reachability, expected rewards, long-run averages and conditional probabilities (run in a child process, as
    every engine: Storm's settings they need are global)."""
    from stormcf.storm.formulas import parse_property
    model = stormcf.load_model(stormcf.example_path("loan.prism"))
    parsed = parse_property(model, prop)
    storm_model = CHECK.labelled_model(CHECK.handle_of(model), parsed.labels)
    lu = isolated(lambda: CHECK._check_storm(storm_model, model, parsed, False, CHECK.SPARSE_LU), "a test")
    sound = check_model(model, prop)
    assert lu.values[model.initial_state] == pytest.approx(sound.value, rel=1e-6, abs=1e-9)


def test_a_stiff_strategy_of_frozenlake4_is_checked_and_the_value_is_right():
    """The DTMC a solver's strategy induced on frozenlake4 (tests/data/frozenlake4.stiff.json: actions of probability
    3e-7 leave a cycle), the case that held `stormcf strategy` in Storm for minutes. Storm's value equals a direct
    linear solve of the same DTMC (numpy, an independent oracle)."""
    model = stormcf.load_model(stormcf.example_path("frozenlake4.prism"))
    sigma = stormcf.Strategy.load(model, os.path.join(DATA, "frozenlake4.stiff.json"))
    with Run(120).active():
        check = check_strategy(sigma, 'P=? [F "hole"]')
    P = (sigma.matrix() @ model.transitions).toarray()
    hole = model.labels["hole"]
    maybe = _can_reach(P, hole) & ~hole
    A = np.eye(maybe.sum()) - P[np.ix_(maybe, maybe)]
    x = np.linalg.solve(A, P[np.ix_(maybe, hole)].sum(axis=1))
    expected = x[np.flatnonzero(maybe) == model.initial_state][0]
    assert check.value == pytest.approx(expected, rel=1e-9)
    assert check.method in (CHECK.OPTIMISTIC, CHECK.SOUND, CHECK.EXACT_ON_FLOATS, CHECK.SPARSE_LU)


def _can_reach(P: np.ndarray, target: np.ndarray) -> np.ndarray:
    """The states with a path to ``target`` in the DTMC ``P`` (a backward closure)."""
    reach = target.copy()
    while True:
        more = reach | (P[:, reach].sum(axis=1) > 0)
        if (more == reach).all():
            return reach
        reach = more


def test_the_first_engine_that_answers_wins_and_the_others_are_stopped(tmp_path):
    marker = tmp_path / "slow-finished"

    def slow():                                   # busy: fallbacks start after the running engine's CPU seconds
        end = time.monotonic() + 60
        while time.monotonic() < end:
            pass
        marker.write_text("done")
        return "slow"

    start = time.perf_counter()
    value, engine = first_answer([Engine("slow", slow), Engine("fast", lambda: "fast", start_after=0.2)], "a test")
    assert (value, engine.method) == ("fast", "fast")
    assert time.perf_counter() - start < 30 and not marker.exists()


def test_fallbacks_start_after_cpu_seconds_not_wall_seconds():
    """An engine that waits (as a check does on a loaded machine, where it gets a fraction of a core) spends no CPU:
    the fallback does not start beside it, so a loaded machine does not run two checks at once."""
    def waiting():
        time.sleep(0.5)
        return "first"

    value, engine = first_answer([Engine("first", waiting), Engine("fallback", lambda: "fallback", start_after=0.05)],
                                 "a test")
    assert (value, engine.method) == ("first", "first")


def test_the_deadline_stops_a_call_and_names_it():
    before = set(_children())                     # (other tests may have left worker processes of their own)
    start = time.perf_counter()
    with pytest.raises(TimeLimitReached, match="reached during sleeping"):
        isolated(lambda: time.sleep(60), "sleeping", Run(0.5))
    assert time.perf_counter() - start < 30
    assert set(_children()) <= before             # the child was killed and reaped


def test_errors_come_back_typed_and_crashes_are_internal_errors():
    def refuse():
        raise PropertyError("not this property")
    with pytest.raises(PropertyError, match="not this property"):
        isolated(refuse, "a test")
    with pytest.raises(StormCrash, match="SIGSEGV during crashing"):
        isolated(lambda: os.kill(os.getpid(), signal.SIGSEGV), "crashing")
    assert isolated(lambda: np.arange(3), "a test").tolist() == [0, 1, 2]


def test_the_first_ctrl_c_lets_a_check_finish():
    """The user's first request to stop ends searches, not the Storm check of the answer to report."""
    interrupt.request()
    try:
        assert isolated(lambda: time.sleep(0.3) or 42, "a check") == 42
    finally:
        interrupt.clear()


def test_in_thread_returns_or_gives_up_at_the_deadline():
    assert in_thread(lambda: 7, "a test") == 7
    start = time.perf_counter()
    with pytest.raises(TimeLimitReached, match="during building"):
        in_thread(lambda: time.sleep(60), "building", Run(0.3))
    assert time.perf_counter() - start < 30                   # given up at the deadline, long before the call ends


def test_scratch_directories_of_children_are_removed(tmp_path, monkeypatch):
    """A child writes its temporary files (Storm's model exchange) into a scratch directory of the parent's, which
    is removed when the child ends or is killed."""
    import tempfile
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def write_and_wait():
        with open(os.path.join(tempfile.gettempdir(), "model.umb"), "w") as f:
            f.write("x")
        time.sleep(60)
    with pytest.raises(TimeLimitReached):
        isolated(write_and_wait, "writing", Run(1.0))
    assert list(tmp_path.iterdir()) == []


def _children() -> list[int]:
    """This process's live child processes (from /proc)."""
    me = str(os.getpid())
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            out.append(int(pid))
    return out


def test_an_exact_check_is_stopped_at_the_deadline():
    """Issue 21: `strategy --exact --time-limit 10` ran for 905 s in Storm's rational solve. Exact checks run in a
    child process too: a rational solve of a 90,000-state DTMC (hours) ends at the deadline."""
    model = stormcf.load_model(stormcf.example_path("grid.prism"), constants="N=300")
    sigma = stormcf.Strategy.uniform(model)
    start = tree_cpu_seconds()
    with pytest.raises(TimeLimitReached, match="exactly"):
        with Run(2.0).active():
            check_strategy(sigma, 'P=? [F "goal"]', exact=True)
    # CPU seconds of this process and its children: the rational DTMC of 90,000 states, assembled in Python
    # fractions, took 18 CPU s (48 s wall) in this process before the child started; now it is built in the child
    assert tree_cpu_seconds() - start < 10


def test_a_ctrl_c_while_z3_enumerates_initial_states_reaches_stormcf():
    """Z3 (Storm's SMT solver for a PRISM model's initial states) installs its own SIGINT handler while it checks:
    without stormcf reclaiming SIGINT the Ctrl-C cancelled Z3's check and never reached stormcf (the command
    went on, or failed saying the model has no single initial state)."""
    model = Path(__file__).parents[1] / "data" / "z3_initial_state.prism"
    proc = subprocess.Popen([sys.executable, "-m", "stormcf", "info", str(model)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    time.sleep(2.5)                                   # start-up, then Z3 searches for about 25 s
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130 and stderr.endswith("stormcf: interrupted\n"), stderr
