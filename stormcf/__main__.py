"""``python -m stormcf`` and the ``stormcf`` command. The command line's modules are imported here, in ``main``, so
that running out of memory while loading them (or after the command's own handlers, as its temporary folder is
removed) is one line with exit code 2 too (below what ``import stormcf``
itself needs, about 430 MiB of address space for Python, numpy, scipy and Storm, Python reports the import).
Before anything else, SIGINT and SIGTERM are made to end the process with 130 / 143 and one line
(:func:`stormcf.interrupt.exit_on_signals`: the package and that module import only the standard library), so that a
signal during the imports is not a traceback, an ImportError or a silent death.

When the time limit gave up on Storm work still running in a thread (a model build), the process ends with
``os._exit`` once the command is done, not through the interpreter's exit, which would tear Storm's C++ state down
under that thread; so does a command a signal ended (exit codes 130 and 143) or the user asked to stop (the first
Ctrl-C): the user wants it gone, and a further Ctrl-C while the interpreter tears its modules down would meet
Python's default handler again (the process killed by SIGINT instead of exit code 130)."""
import ctypes
import os
import sys


def main() -> int:
    from .interrupt import INTERRUPTED_EXIT, TERMINATED_EXIT, clean_up, ever_interrupted, exit_on_signals
    exit_on_signals()
    from .limits import is_out_of_memory, out_of_memory_message
    try:
        from .cli import main as command_line
        from .deadline import process_age
        code = command_line(started=process_age())      # the time limit counts Python's start-up too
    except (MemoryError, ImportError, SystemError) as err:     # loading the modules, or past the command's own
        if not is_out_of_memory(err):                          # handlers (its temporary folder's teardown)
            raise
        print(f"stormcf: error: {out_of_memory_message(err)}", file=sys.stderr)
        return 2
    isolate = sys.modules.get("stormcf.storm.isolate")
    abandoned = isolate is not None and isolate.abandoned()
    if code in (INTERRUPTED_EXIT, TERMINATED_EXIT) or ever_interrupted() or abandoned:
        clean_up()                                      # the temporary files of the abandoned work, too
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):
                pass
        ctypes.CDLL(None).fflush(None)                  # the C libraries' buffered output (solver logs with -v)
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
