"""``python -m stormcf`` and the ``stormcf`` command. The command line's modules are imported here, in ``main``, so
that running out of memory while loading them is one line with exit code 2 too (below what ``import stormcf``
itself needs, about 430 MiB of address space for Python, numpy, scipy and Storm, Python reports the import).

When the time limit gave up on Storm work still running in a thread (a model build), the process ends with
``os._exit`` once the command is done, not through the interpreter's exit, which would tear Storm's C++ state down
under that thread."""
import os
import sys


def main() -> int:
    from .limits import is_out_of_memory, out_of_memory_message
    try:
        from .cli import main as command_line
    except (MemoryError, ImportError) as err:
        if not is_out_of_memory(err):
            raise
        print(f"stormcf: error: {out_of_memory_message(err)}", file=sys.stderr)
        return 2
    from .deadline import process_age
    code = command_line(started=process_age())          # the time limit counts Python's start-up too
    isolate = sys.modules.get("stormcf.storm.isolate")
    if isolate is not None and isolate.abandoned():
        from .interrupt import clean_up
        clean_up()                                      # the temporary files of the abandoned work, too
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
