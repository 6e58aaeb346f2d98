"""What scripts and pipelines see of stormcf's output: a closed pipe ends the command quietly (exit 141, like Unix
tools), every output file gets the permissions a plain ``open()`` would give (the umask; a replaced file keeps its
mode) through the one atomic writer, what is not a regular file (a FIFO, a device, /dev/stdout) is written
through, and ``--help`` lists every exit code."""
import errno
import json
import os
import stat
import subprocess
import sys

import pytest

import stormcf
from stormcf.errors import OutputError
from stormcf.learn.log import read_log
from stormcf.report import write_text

LOAN = stormcf.example_path("loan.prism")


def run_into_closed_pipe(*argv):
    """``stormcf ARGV`` whose stdout is a pipe nobody reads any more (``stormcf ... | head`` after head exited)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([sys.executable, "-m", "stormcf", *map(str, argv)], stdout=write,
                              stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL, timeout=600)
    finally:
        os.close(write)


@pytest.mark.parametrize("argv", [("info", LOAN, "--json", "-"), ("demo",)])
def test_a_closed_pipe_ends_the_command_quietly(argv):
    """The issue's `stormcf demo | head -5`: no 'internal error: BrokenPipeError', exit 128 + SIGPIPE."""
    proc = run_into_closed_pipe(*argv)
    assert (proc.returncode, proc.stderr) == (141, "")


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_output_files_get_the_mode_the_umask_gives(umask, tmp_path):
    """A plain open() creates files 0666 & ~umask; mkstemp made every output 0600 whatever the umask."""
    folder = tmp_path / "out"
    folder.mkdir()
    subprocess.run([sys.executable, "-m", "stormcf", "demo-learn", "--dir", folder, "--cases", "50", "-q",
                    "--json", folder / "demo.json"], check=True, capture_output=True, timeout=600,
                   preexec_fn=lambda: os.umask(umask))
    files = sorted(p.name for p in folder.iterdir())
    assert files == ["demo.json", "learned.prism", "loan_log.csv", "sigma.json"]   # no temporary file left
    assert {name: mode(folder / name) for name in files} == {name: 0o666 & ~umask for name in files}


def test_a_replaced_file_keeps_its_mode(tmp_path):
    out = tmp_path / "info.json"
    out.write_text("{}")
    out.chmod(0o604)
    subprocess.run([sys.executable, "-m", "stormcf", "info", LOAN, "--json", out], check=True, capture_output=True,
                   timeout=600)
    assert mode(out) == 0o604 and '"command": "info"' in out.read_text()


def test_the_learning_log_is_written_atomically(tmp_path, monkeypatch, cli):
    """demo-learn's loan_log.csv goes through the atomic writer: a failed write (a full disk when the file is
    flushed to disk) leaves the earlier file as it was and no temporary file."""
    assert cli("demo-learn", "--dir", tmp_path, "--cases", "40", "-q")[0] == 0
    log = tmp_path / "loan_log.csv"
    before = log.read_bytes()

    def full_disk(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(OutputError, match="No space left on device"):
        read_log(log).to_csv(log)
    with pytest.raises(OutputError, match="No space left on device"):
        write_text("x", tmp_path / "sigma.json")
    assert log.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["learned.prism", "loan_log.csv", "sigma.json"]


def test_help_lists_every_exit_code(cli):
    code, out, _ = cli("--help")
    assert code == 0
    text = " ".join(out.split())
    for number in ("0 success", "2 bad input", "1 internal error", "3 check", "4 a batch item failed",
                   "5 the time limit ran out before there was an answer", "130 interrupted", "141", "143 terminated"):
        assert number in text


GRID, GRID_PATH = stormcf.example_path("gridworld.prism"), stormcf.example_path("gridworld.catastrophic.json")
TREAT, TREAT_PATH = stormcf.example_path("treat.prism"), stormcf.example_path("treat.path.json")


@pytest.mark.parametrize("argv, needle", [
    (["explain-path", TREAT, "--path", TREAT_PATH, "--k", "1", "--mc-samples", "50"],
     "--mc-samples 50 applies to --estimator mc only (the estimator is exact)"),
    (["icfmdp", GRID, "-c", "p=0.4", "--path", GRID_PATH, "--baseline", "gumbel", "--mc-samples", "50"],
     "--mc-samples 50 applies to --estimator mc only"),
    (["icfmdp", GRID, "-c", "p=0.4", "--path", GRID_PATH, "--estimator", "mc"],
     "--estimator mc applies to the Gumbel-max baseline only")])
def test_options_that_would_be_ignored_are_refused(argv, needle, cli):
    """--mc-samples without --estimator mc used to be ignored silently."""
    code, out, err = cli(*argv)
    assert code == 2 and needle in err and not out


# ================================================================================================ what a path is
def test_a_fifo_is_written_through_and_stays_a_fifo(tmp_path, cli):
    """Issue 37: --out and --json replaced a FIFO (or a device) by a regular file through the atomic rename."""
    from tests.fuzz.hostile import fifo_with_reader
    fifo, json_fifo = fifo_with_reader(tmp_path, "p.fifo"), fifo_with_reader(tmp_path, "d.fifo")
    code, _, err = cli("simulate", LOAN, "--steps", "3", "--out", fifo, "--json", json_fifo, "-q")
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and stat.S_ISFIFO(os.stat(json_fifo).st_mode)
    assert len(json.loads(_read_when_written(tmp_path / "p.fifo.read"))["steps"]) == 3
    assert json.loads(_read_when_written(tmp_path / "d.fifo.read"))["command"] == "simulate"


def _read_when_written(path, seconds=60):
    """The text a reader thread copied from a FIFO, once the writer closed it."""
    import time
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text() if path.exists() else ""
        if text.endswith("\n"):
            return text
        time.sleep(0.01)
    raise AssertionError(f"nothing came through the FIFO ({path})")


def test_a_full_device_is_one_line_and_stays_a_device(tmp_path, cli):
    """`--out /dev/full` exited 0 and replaced the device by a 1,195-byte regular file (as root); a device made in
    the test stands for it, never the machine's own /dev files."""
    from tests.fuzz.hostile import full_device
    device = full_device(tmp_path)
    code, _, err = cli("simulate", LOAN, "--steps", "3", "--out", device, "-q")
    assert code == 2 and err == f"stormcf: error: {device}: cannot write (No space left on device): the disk or " \
                                "device is full\n"
    assert stat.S_ISCHR(os.stat(device).st_mode) and os.listdir(tmp_path) == ["full"]


def test_a_fifo_in_a_read_only_folder_is_writable(tmp_path, stormcf_process):
    """check_outputs asks whether the FIFO itself can be written, not its folder (which a rename would need)."""
    from tests.fuzz.hostile import fifo_with_reader
    folder = tmp_path / "ro"
    folder.mkdir()
    fifo = fifo_with_reader(folder, "p.fifo")
    os.chmod(fifo, 0o666)
    os.chmod(folder, 0o555)
    try:
        proc = stormcf_process("simulate", LOAN, "--steps", "3", "--out", fifo, "-q", unprivileged=True)
        assert proc.code == 0, proc.err
        assert len(json.loads(_read_when_written(folder / "p.fifo.read"))["steps"]) == 3
    finally:
        os.chmod(folder, 0o755)


def test_a_symbolic_link_is_followed_and_stays(tmp_path, cli):
    """The file a link names is replaced atomically (its temporary file beside it, in its own folder); the link
    stays a link."""
    elsewhere = tmp_path / "runs"
    elsewhere.mkdir()
    (elsewhere / "p.json").write_text("old")
    link = tmp_path / "latest.json"
    link.symlink_to(elsewhere / "p.json")
    assert cli("simulate", LOAN, "--steps", "3", "--out", link, "-q")[0] == 0
    assert link.is_symlink() and len(json.loads((elsewhere / "p.json").read_text())["steps"]) == 3
    assert sorted(os.listdir(elsewhere)) == ["p.json"]


def test_a_descriptor_is_written_through():
    """--json /dev/fd/1 (as /dev/stdout, which the test leaves alone: a rename there would replace the machine's
    link) writes into the pipe the descriptor is."""
    proc = subprocess.run([sys.executable, "-m", "stormcf", "info", LOAN, "--json", "/dev/fd/1", "-q"], check=False,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert '"command": "info"' in proc.stdout and "JSON written to /dev/fd/1" in proc.stdout
