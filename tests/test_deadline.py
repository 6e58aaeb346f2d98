"""stormcf.deadline: one time budget per command, sub-budgets that never outlive it, phase timings."""
import math

import pytest

from stormcf.deadline import Deadline
from stormcf.errors import StormcfError, TimeLimitReached


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_remaining_expiry_and_budget():
    clock = Clock()
    d = Deadline(10, clock=clock)
    assert d.remaining() == 10 and not d.expired and d.limited
    clock.now += 4
    assert d.remaining() == 6 and d.elapsed() == 4 and d.budget() == 6 and d.budget(at_most=2) == 2
    clock.now += 7
    assert d.expired and d.remaining() == 0 and d.budget() == 0.01
    with pytest.raises(TimeLimitReached, match="time limit of 10 s was reached during the d0 MILP"):
        d.check("the d0 MILP")


def test_sub_budgets_end_no_later_than_their_parent():
    clock = Clock()
    d = Deadline(100, clock=clock)
    clock.now += 20
    quarter = d.sub(fraction=0.25)
    assert quarter.remaining() == 20                      # a quarter of the 80 s left
    assert d.sub(seconds=500).remaining() == 80           # capped by the parent
    inner = quarter.sub(seconds=5)
    clock.now += 6
    assert inner.expired and not quarter.expired and not d.expired


def test_phases_record_their_time_in_the_shared_timings():
    clock = Clock()
    d = Deadline(60, clock=clock)
    with d.phase("pre-analysis"):
        clock.now += 1.5
    with d.phase("solve", fraction=0.5) as budget:
        assert budget.remaining() == pytest.approx(29.25)
        with budget.phase("storm check"):
            clock.now += 2
        clock.now += 1
    assert dict(d.timings) == {"pre-analysis": 1.5, "storm check": 2, "solve": 3}


def test_a_sub_budget_ends_when_its_predicate_says_so():
    clock, done = Clock(), []
    d = Deadline(60, clock=clock)
    heuristics = d.sub(fraction=0.5, until=lambda: bool(done))
    inner = heuristics.sub(seconds=10)
    assert not heuristics.expired and not inner.expired
    done.append(True)
    assert heuristics.expired and inner.expired and not d.expired


def test_unlimited_and_invalid():
    d = Deadline()
    assert not d.limited and d.remaining() == math.inf and not d.expired and d.budget(at_most=3) == 3
    for bad in (0, -1, float("nan"), 1e18, True, "5"):
        with pytest.raises(StormcfError, match="time limit must be a positive number"):
            Deadline(bad)


def test_messages_name_the_limit_that_was_reached():
    """A sub-budget that its parent ends names the parent's limit (a batch item stopped by the batch's time limit
    says so), one that ends first names its own; a deadline rebuilt in a worker after its end is expired at once."""
    import time
    clock = Clock()
    batch = Deadline(8, clock=clock, limit="the batch's time limit of 8 s")
    clock.now += 7
    item = batch.sub(seconds=2, limit="the item time limit of 2 s")
    short = batch.sub(seconds=0.5, limit="the item time limit of 0.5 s")
    phase = short.sub(fraction=0.5)
    clock.now += 1
    with pytest.raises(TimeLimitReached, match="^the batch's time limit of 8 s was reached during the DP$"):
        item.check("the DP")
    with pytest.raises(TimeLimitReached, match="^the item time limit of 0.5 s was reached during the DP$"):
        short.check("the DP")
    # a share of a phase is named by the limit it is part of
    assert phase.limit == "the item time limit of 0.5 s" and Deadline(10).limit == "the time limit of 10 s"
    late = Deadline.until(time.time() - 1, "the batch's time limit of 3 s")
    assert late.expired and late.limit == "the batch's time limit of 3 s"
    assert not Deadline.until(math.inf).limited
