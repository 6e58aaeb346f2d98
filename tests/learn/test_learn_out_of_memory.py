"""stormcf learn when memory runs out: in every phase (reading the log with numpy, learning, writing, Storm
building the learned model, Storm's checks) the command says "out of memory" in one line with exit code 2, never a
crash or an internal error. Storm's explicit builder crashed (a segmentation fault) when it ran out of memory
before it started: stormcf refuses with less than stormcf.limits.STORM_BUILD_HEADROOM left."""
import subprocess
import sys
from pathlib import Path

from stormcf.limits import STORM_BUILD_HEADROOM

LOG = Path(__file__).resolve().parents[1] / "data" / "loan_paired.csv"


def test_learn_under_a_sweep_of_memory_limits(tmp_path, stormcf_process):
    probe = subprocess.run([sys.executable, "-c", "import stormcf.cli, stormcf.learn.solve; "
                            "print(open('/proc/self/status').read().split('VmSize:')[1].split()[0])"],
                           capture_output=True, text=True, check=True)
    base = int(probe.stdout) * 1024
    codes = set()
    for extra in range(0, STORM_BUILD_HEADROOM // 2 ** 20 + 50, 10):        # MiB above what the imports map
        run = stormcf_process("learn", LOG, "--out", tmp_path / "learned.prism", "-q", memory=base + extra * 2 ** 20)
        codes.add(run.code)
        assert run.code in (0, 2), (extra, run.code, run.err[-500:])
        if run.code == 2:
            assert run.one_line_error and "stormcf: error: out of memory" in run.err, (extra, run.err)
    assert codes == {0, 2}, "the sweep should cross from running out of memory to success"


def test_a_null_without_exception_counts_as_out_of_memory_only_at_the_address_space_limit():
    """CPython's SystemError of a C function whose allocation failed without setting MemoryError (``compile`` under
    a tight ``ulimit -v``) is out of memory when the address space is at its limit, an internal error otherwise."""
    code = ("import resource, sys\nfrom stormcf.limits import _mapped, is_out_of_memory\n"
            "err = SystemError('<built-in function compile> returned NULL without setting an exception')\n"
            "free = is_out_of_memory(err)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (_mapped() + 2 ** 20, resource.RLIM_INFINITY))\n"
            "print(free, is_out_of_memory(err), is_out_of_memory(SystemError('something else')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True", "False"]
