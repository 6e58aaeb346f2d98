"""stormcf.console: what C code prints is silenced or sent to stderr (file descriptors, not Python streams), and
progress bars appear on stderr only when it is a terminal and -q is not given."""
import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import stormcf

SNIPPET = """
import os, sys
from stormcf import console
with console.native_output(show={show}):
    os.write(1, b"C stdout\\n")             # as HiGHS's banner
    os.write(2, b"C stderr\\n")             # as SCIP's warnings
    print("python stdout")
    print("python stderr", file=sys.stderr)
    os.system("echo child process")        # a solver in a child process inherits the descriptors
print("after")
os.write(1, b"C after\\n")
"""


def run_snippet(show: bool) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SNIPPET.format(show=show)], capture_output=True, text=True,
                          check=True)


def test_native_output_is_silenced_while_python_output_stays():
    proc = run_snippet(show=False)
    assert proc.stdout == "python stdout\nafter\nC after\n"
    assert proc.stderr == "python stderr\n"


def test_native_output_goes_to_stderr_when_shown():
    proc = run_snippet(show=True)
    assert proc.stdout == "python stdout\nafter\nC after\n"
    assert proc.stderr.splitlines() == ["C stdout", "C stderr", "python stderr", "child process"]


def test_native_output_leaves_foreign_streams_alone(capsys):
    """A stream that is not the process's own (pytest's capture, a notebook's) keeps receiving Python's output."""
    from stormcf import console
    with console.native_output():
        print("captured")
    assert capsys.readouterr().out == "captured\n"


def run_on_a_terminal(*argv) -> tuple[int, str, str]:
    """``python -m stormcf ARGV`` with stderr on a pseudo-terminal: (exit code, stdout, what the terminal showed)."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))     # 24 rows, 100 columns
    proc = subprocess.Popen([sys.executable, "-m", "stormcf", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=terminal, stdin=subprocess.DEVNULL, text=True)
    os.close(terminal)
    shown = b""
    while True:
        try:
            chunk = os.read(controller, 4096)
        except OSError:                    # the terminal closed: the process ended
            break
        if not chunk:
            break
        shown += chunk
    out, _ = proc.communicate()
    os.close(controller)
    return proc.returncode, out, shown.decode(errors="replace")


RECOURSE = [stormcf.example_path("person.prism"), "-c", "p=1", "--target", "accept",
            "--cost", "cost", "--generations", "30", "--offspring", "20", "--mutants", "5"]


def test_progress_is_shown_on_a_terminal_and_silenced_by_quiet():
    code, out, shown = run_on_a_terminal("recourse", *RECOURSE)
    assert code == 0 and "BRKGA generations" in shown and "BRKGA generations" not in out
    code, out, shown = run_on_a_terminal("recourse", *RECOURSE, "-q")
    assert code == 0 and shown == "" and "plan 1" in out


def test_no_progress_when_stderr_is_not_a_terminal(stormcf_process):
    run = stormcf_process("recourse", *RECOURSE)
    assert run.code == 0 and run.err == ""


def test_an_activity_is_shown_on_a_non_terminal_with_verbose_only_when_it_lasts():
    """Reporter.activity: with -v on a non-terminal, a phase that runs longer than its threshold gets a line when it
    has run that long and one when it ends; a short one, or any without -v, shows nothing."""
    import io
    import time

    from stormcf.console import NORMAL, VERBOSE, Reporter
    stream = io.StringIO()
    verbose = Reporter(VERBOSE, stream)
    with verbose.activity("a short phase", after=5.0):
        pass
    with verbose.activity("Storm, checking P=? [F goal]", after=0.1):
        time.sleep(0.5)
    with Reporter(NORMAL, stream).activity("a quiet phase", after=0.1):
        time.sleep(0.3)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "stormcf: Storm, checking P=? [F goal] ..."
    assert lines[1].startswith("stormcf: Storm, checking P=? [F goal]: done in ") and len(lines) == 2


def test_a_run_on_a_non_terminal_says_what_it_does_every_heartbeat():
    """No silent minutes where stderr is not a terminal (CI, scripts, Docker logs): while a run works, a line every
    heartbeat names what is under way, outermost first, with a counted task's progress; -q silences it."""
    import io
    import threading

    from stormcf.console import NORMAL, QUIET, Reporter
    stream = io.StringIO()
    reporter = Reporter(NORMAL, stream, heartbeat=0.05)
    seen = threading.Event()
    with reporter.running(), reporter.activity("training the adult classifier"):
        with reporter.bar(range(10), desc="BRKGA generations") as bar:
            for k in bar:
                if k == 3:
                    bar.set_postfix(front=2)
                    while "3/10" not in stream.getvalue():
                        seen.wait(0.01)
                    break
    line = next(line for line in stream.getvalue().splitlines() if "3/10" in line)
    assert line.startswith("stormcf: ") and line.endswith(
        ": training the adult classifier: BRKGA generations: 3/10 (30%), front 2")
    quiet = io.StringIO()
    with Reporter(QUIET, quiet, heartbeat=0.01).running():
        seen.wait(0.1)
    assert quiet.getvalue() == ""
