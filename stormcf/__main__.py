"""``python -m stormcf`` and the ``stormcf`` command. The command line's modules are imported here, in ``main``, so
that running out of memory while loading them is one line with exit code 2 too (below what ``import stormcf``
itself needs, about 430 MiB of address space for Python, numpy, scipy and Storm, Python reports the import)."""
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
    return command_line()


if __name__ == "__main__":
    sys.exit(main())
