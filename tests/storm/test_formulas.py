"""Properties (stormcf.storm.formulas): parsed by Storm, evaluated on the whole model as `info` shows it."""
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stormcf


def test_parse_property_fields(loan):
    p = stormcf.parse_property(loan, 'P<=0.2 [F "rejected"]')
    assert (p.operator, p.comparison, p.threshold, p.path) == ("P", "<=", Fraction(1, 5), "eventually")
    assert p.target.sum() == 1 and p.target[loan.state_index({"s": 8})]
    assert p.satisfied_by(Fraction(1, 5)) and not p.satisfied_by(0.2000001)
    q = stormcf.parse_property(loan, 'Pmax=? [!"granted" U<=3 "rejected"]')
    assert (q.optimization, q.path, q.step_bound, q.comparison) == ("max", "bounded_until", 3, None)
    assert q.constraint.sum() == loan.n_states - 1
    r = stormcf.parse_property(loan, 'R{"steps"}min=? [C<=4]')
    assert (r.operator, r.reward_model, r.path) == ("R", "steps", "cumulative")


@pytest.mark.parametrize("text,operator,path", [
    ('LRAmax=? ["rejected"]', "LRA", "long_run_average"),
    ('S=? ["rejected"]', "LRA", "long_run_average"),
    ('R{"steps"}max=? [LRA]', "R", "long_run_average"),
    ('R{"steps"}min=? [C]', "R", "total"),
    ('R{"steps"}min=? [I=3]', "R", "instantaneous"),
    ('Pmax=? [X s=1]', "P", "next"),
    ('Pmax=? [F{"steps"}<=3 "rejected"]', "P", "reward_bounded_until"),
    ('multi(Pmax=? [F "rejected"], R{"steps"}min=? [F s>=7])', "multi", "multi"),
])
def test_property_kinds(loan, text, operator, path):
    p = stormcf.parse_property(loan, text)
    assert (p.operator, p.path) == (operator, path)


def test_reward_bounds_and_objectives(loan):
    p = stormcf.parse_property(loan, 'Pmax=? [F{"steps"}<=3 "rejected"]')
    assert p.reward_bounds == ("steps",) and p.step_bound is None
    m = stormcf.parse_property(loan, 'multi(Pmax=? [F{"steps"}<=3 "rejected"], R{"steps"}min=? [F s>=7])')
    assert [o.operator for o in m.objectives] == ["P", "R"] and m.reward_bounds == ("steps",)
    assert list(m.labels) == ["(s >= 7)"] and m.objectives[1].target.sum() == 2


@pytest.mark.parametrize("text,needle", [
    ('P=? [F "nolabel"]', 'unknown label "nolabel"'),
    ('R{"cost"}=? [F "granted"]', 'unknown reward model "cost"'),
    ('Pmax=? [F{"cost"}<=3 "granted"]', 'unknown reward model "cost"'),
    ('P=? [F "granted"', "cannot parse property"),
    ('P=? [F t>=7]', "cannot parse property"),
])
def test_bad_properties_raise_property_error(loan, text, needle):
    with pytest.raises(stormcf.PropertyError, match=needle):
        stormcf.parse_property(loan, text)


def test_expressions_are_evaluated_on_the_whole_model(loan):
    p = stormcf.parse_property(loan, "Pmin=? [F s>=7]")
    np.testing.assert_array_equal(p.target, loan.valuations["s"] >= 7)
    assert p.labels.keys() == {"(s >= 7)"} and "(s >= 7)" not in loan.labels
    x = stormcf.parse_property(loan, "Pmax=? [X (s=1 | s=8)]")          # stormpy hides X's parts: found by probing
    assert x.labels.keys() == {"((s = 1) | (s = 8))"}


def test_expression_semantics_are_storms(tmp_path):
    """Integer division is real division in PRISM, min/max/mod/ternary are Storm's: the mask must equal Storm's own
    labelling when Storm builds the model for the property."""
    import stormpy
    f = tmp_path / "e.nm"
    f.write_text("mdp\nconst int K = 3;\nmodule m\n x : [0..7] init 0;\n y : [-2..2] init 0;\n"
                 " [a] true -> 0.5:(x'=mod(x+1,8)) + 0.5:(y'=max(-2, y-1));\n"
                 " [b] true -> (y'=min(2, y+1));\nendmodule\n")
    text = "Pmax=? [F (x/2 > 1.2 & mod(x, K) != 0) | (y<0 ? x=7 : pow(y, 2)=4)]"
    m = stormcf.load_model(f)
    p = stormcf.parse_property(m, text)
    program = stormpy.parse_prism_program(str(f))
    props = stormpy.parse_properties(text, program)
    built = stormpy.build_model(program, options=stormpy.BuilderOptions(props, build_full=True))
    (name,) = p.labels
    sv = built.state_valuations
    index = {(sv.get_value(s, next(v for v in sv.get_all_variables() if v.name == "x")),
              sv.get_value(s, next(v for v in sv.get_all_variables() if v.name == "y"))): s
             for s in range(built.nr_states)}
    theirs = set(built.labeling.get_states(name))
    compared = 0
    for s in range(m.n_states):          # Storm's build for the property stops at its targets: fewer states
        key = (int(m.valuations["x"][s]), int(m.valuations["y"][s]))
        if key in index:
            assert p.labels[name][s] == (index[key] in theirs)
            compared += 1
    assert compared == built.nr_states and built.nr_states < m.n_states
    assert 0 < p.labels[name].sum() < m.n_states


def test_reward_property_without_name_uses_the_only_reward_model(loan):
    p = stormcf.parse_property(loan, 'Rmax=? [C<=3]')
    assert p.reward_model == "steps" and p.path == "cumulative"


# ============================================================================================== bounds read exactly
@pytest.mark.parametrize("written, decimal, value", [
    ('P<=1/5 [F "rejected"]', 'P<=0.2 [F "rejected"]', Fraction(1, 5)),
    ('R{"steps"}<=9/4 [F "granted" | "rejected"]', 'R{"steps"}<=2.25 [F "granted" | "rejected"]', Fraction(9, 4)),
    ('P>=(1+2)/5 [F "granted"]', 'P>=0.6 [F "granted"]', Fraction(3, 5)),
    ('T<=1/3 [F "granted" | "rejected"]', 'T<=0.3333333333333333333 [F "granted" | "rejected"]', None),
    ('P<=REJECTED/40 [F "rejected"]', 'P<=0.2 [F "rejected"]', Fraction(1, 5)),   # a constant of the model
])
def test_a_bound_written_as_an_expression_is_the_fraction_storm_reads(loan, written, decimal, value):
    """Storm evaluates a bound's expression as a rational (stormpy's formula.threshold gave 0 for 1/5)."""
    a, b = stormcf.parse_property(loan, written), stormcf.parse_property(loan, decimal)
    if value is None:
        assert a.threshold == Fraction(1, 3) and b.threshold == Fraction(3333333333333333333, 10**19)
    else:
        assert a.threshold == b.threshold == value and a.comparison == b.comparison


@given(b=st.fractions(min_value=0, max_value=1, max_denominator=10**12), decimals=st.integers(1, 25))
@settings(max_examples=30)
def test_random_bounds_are_read_exactly(loan, b, decimals):
    """The bound read equals Fraction(b), written as a fraction or (rounded to some decimals) as a decimal."""
    as_fraction = stormcf.parse_property(loan, f'P<={b.numerator}/{b.denominator} [F "rejected"]')
    assert as_fraction.threshold == b
    rounded = Fraction(round(b * 10**decimals), 10**decimals)
    digits = f"{rounded.numerator * 10**decimals // rounded.denominator:0{decimals + 1}d}"
    as_decimal = stormcf.parse_property(loan, f'R{{"steps"}}>={digits[:-decimals]}.{digits[-decimals:]} [F "granted"]')
    assert as_decimal.threshold == rounded


@pytest.mark.parametrize("text", ['P<=1.5 [F "rejected"]', 'P>=-1/10 [F "rejected"]', 'P<3/2 [F "rejected"]'])
def test_a_probability_bound_outside_0_1_is_refused(loan, text):
    with pytest.raises(stormcf.errors.PropertyError, match=r"outside \[0, 1\]"):
        stormcf.parse_property(loan, text)


def test_a_step_bound_written_as_an_expression(loan):
    assert stormcf.parse_property(loan, 'P=? [F<=(1+2) "rejected"]').step_bound == 3
    assert stormcf.parse_property(loan, 'P=? [F<=REJECTED "rejected"]').step_bound == 8
