"""The ``stormcf`` command line: a thin layer over the Python API.

Exit codes: 0 success, 2 user error (one line on stderr naming the problem), 1 internal error.
"""
from __future__ import annotations

import argparse
import os
import sys
import traceback
from importlib import import_module

from ..errors import StormcfError

#: subcommand modules of stormcf.cli; each has ``register(subparsers)``
COMMANDS = ("info", "check", "strategy", "icfmdp", "explain_path", "recourse", "setcover", "setcover_learn",
            "setcover_evaluate", "demo", "learn", "demo_learn")


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage error as one line and exit code 2."""

    def error(self, message: str) -> None:   # type: ignore[override]
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="stormcf", description="Counterfactual explanations for MDPs, checked by Storm.")
    parser.add_argument("--version", action="version", version=_version())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in COMMANDS:
        import_module(f"{__name__}.{name}").register(sub)
    return parser


def _version() -> str:
    from .. import __version__
    return f"stormcf {__version__}"


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:                    # usage errors (exit 2, one line) and --help/--version (0)
        return int(done.code or 0)
    try:
        return int(args.run(args) or 0)
    except StormcfError as err:
        print(f"stormcf: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stormcf: interrupted", file=sys.stderr)
        return 130
    except Exception as err:   # an internal error: say so, keep the traceback for STORMCF_DEBUG=1
        if os.environ.get("STORMCF_DEBUG"):
            traceback.print_exc()
        print(f"stormcf: internal error: {type(err).__name__}: {err} "
              f"(set STORMCF_DEBUG=1 for the traceback)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
