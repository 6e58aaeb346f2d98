"""``stormcf simulate``: the path file never replaces the model or the strategy it is simulated from."""
import pytest

from .hostile import IMPATIENT, LOAN, Case, fifo_with_reader, full_device, write


def copy(name, source):
    return lambda d: write(d, name, open(source).read())


CASES = [
    Case("a path of 3 steps", lambda d: ["simulate", LOAN, "--steps", "3", "--out", "p.json"], 0, "3 steps"),
    Case("--out onto the model", lambda d: ["simulate", copy("t.prism", LOAN)(d), "--steps", "3", "--out",
                                            "t.prism"], 2, "--out t.prism: is also the input MODEL"),
    Case("--out onto the model by another path", lambda d: _another_path(d), 2, "is also the input MODEL"),
    Case("--out onto the strategy", lambda d: ["simulate", LOAN, "-s", copy("s.json", IMPATIENT)(d), "--steps", "3",
                                               "--out", "s.json"], 2, "--out s.json: is also --strategy"),
    Case("--out and --json on one file", lambda d: ["simulate", LOAN, "--steps", "3", "--out", "p.json", "--json",
                                                    "p.json"], 2, "--json p.json: is also --out p.json"),
    Case("--steps 10^12", lambda d: ["simulate", LOAN, "--steps", str(10 ** 12), "--out", "p.json"], 2,
         "would need about"),
    Case("--out a full device", lambda d: ["simulate", LOAN, "--steps", "3", "--out", full_device(d)], 2,
         "full: cannot write (No space left on device): the disk or device is full"),
    Case("--json a full device", lambda d: ["simulate", LOAN, "--steps", "3", "--out", "p.json", "--json",
                                            full_device(d)], 2, "full: cannot write (No space left on device)"),
    Case("--out a FIFO", lambda d: ["simulate", LOAN, "--steps", "3", "--out", fifo_with_reader(d, "p.fifo")], 0,
         "p.fifo: 3 steps"),
]


def _another_path(folder):
    (folder / "sub").mkdir()
    return ["simulate", copy("t.prism", LOAN)(folder), "--steps", "3", "--out", "./sub/../t.prism"]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_simulate(case, hostile):
    hostile(case)


def test_the_model_survives_a_refused_overwrite(tmp_path, cli):
    model = tmp_path / "t.prism"
    model.write_text(open(LOAN).read())
    assert cli("simulate", model, "--steps", "3", "--out", model)[0] == 2
    assert model.read_text() == open(LOAN).read()
