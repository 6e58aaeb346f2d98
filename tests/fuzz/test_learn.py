"""``stormcf learn`` on hostile event logs and options, and on outputs that cannot be written (a file size limit, a
full stdout)."""
import resource

import pytest

from .hostile import DATA, Case, write

LOG = DATA / "loan_paired.csv"


def learn(log, *args):
    return ["learn", log, "--out", "m.prism", *args]


def csv(text):
    return lambda d: write(d, "log.csv", text)


CASES = [
    Case("the loan log", lambda d: learn(LOG), 0, "learned"),
    Case("a timestamp nan", lambda d: learn(csv("case,action,observation,timestamp\nc1,,s0,5\nc1,a,x,nan\n"
                                                "c1,b,y,1\n")(d)), 2, "timestamp 'nan' is not a finite number"),
    Case("a timestamp inf", lambda d: learn(csv("case,action,observation,timestamp\nc1,,s0,5\nc1,a,x,inf\n")(d)), 2,
         "timestamp 'inf' is not a finite number"),
    Case("timestamps out of order", lambda d: learn(csv("case,action,observation,timestamp\nc1,,s0,5\nc1,a,x,1\n")(d)),
         2, "is earlier than"),
    Case("an unterminated quote", lambda d: learn(csv('case,action,observation\nc1,,s0\nc1,"a,x\nc1,b,y\n')(d)), 2,
         "log.csv:3: a quoted cell starts in this row and is never closed"),
    Case("text after a closing quote", lambda d: learn(csv('case,action,observation\nc1,,"s"0\nc1,a,x\n')(d)), 2,
         "log.csv:2: not valid CSV"),
    Case("a row of 2 fields", lambda d: learn(csv("case,action,observation\nc1,,s0\nc1,a\n")(d)), 2,
         "log.csv:3: 2 fields, the header has 3"),
    Case("--label a=X --label a=Y", lambda d: learn(LOG, "--label", "a=granted", "--label", "a=rejected"), 2,
         "--label a is given twice"),
    Case("--reward with an action twice", lambda d: learn(LOG, "--reward", "c=Apply:1,Apply:2"), 2,
         "the action 'Apply' is given twice"),
    Case("--laplace nan", lambda d: learn(LOG, "--laplace", "nan"), 2, "expected a finite number >= 0"),
    Case("a property naming a label the log never shows",
         lambda d: learn(csv("case,action,observation\nc0,,s0\nc0,Apply,Application\nc0,Provider,Rework\n")(d),
                         "-p", 'P=? [F "rejected"]'), 2,
         "names the label \"rejected\", but no event of"),
    Case("--out onto the log", lambda d: ["learn", write(d, "log.prism", LOG.read_text()), "--out", "log.prism"], 2,
         "is also the input LOG"),
    Case("--out and --strategy-out on one file", lambda d: learn(LOG, "--strategy-out", "m.prism"), 2,
         "--strategy-out m.prism: is also --out m.prism"),
    Case("--out over ulimit -f", lambda d: learn(LOG), 2, "m.prism: cannot write (File too large)",
         fresh_process=True, limits={resource.RLIMIT_FSIZE: 512}),
    Case("--json - into a full stdout", lambda d: learn(LOG, "--json", "-"), 2,
         "stdout: cannot write (No space left on device)", fresh_process=True, stdout="full"),
    Case("text into a full stdout", lambda d: learn(LOG), 2, "No space left on device", fresh_process=True,
         stdout="full"),
    Case("a closed stdout", lambda d: learn(LOG, "--json", "-"), 2, "stdout is closed", fresh_process=True,
         stdout="closed"),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_learn(case, hostile):
    hostile(case)


@pytest.fixture
def full_disk(tmp_path):
    """A 64 KiB tmpfs filled to the last byte (needs the right to mount: skipped without it)."""
    import shutil
    import subprocess
    folder = tmp_path / "full"
    folder.mkdir()
    if shutil.which("mount") is None or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs",
                                                        str(folder)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        with open(folder / "fill", "wb") as f:
            try:
                f.write(b"\0" * 200_000)
            except OSError:
                pass
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def test_learn_onto_a_full_disk(full_disk, cli):
    """A full disk: one line, exit code 2, and nothing left behind (no staged model, no temporary file)."""
    code, _, err = cli("learn", LOG, "--out", full_disk / "m.prism", "--strategy-out", full_disk / "s.json")
    assert code == 2 and "m.prism: cannot write (No space left on device)" in err and err.count("\n") == 1
    assert sorted(p.name for p in full_disk.iterdir()) == ["fill"]
