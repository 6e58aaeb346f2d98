"""The analyses x contract table of docs/architecture.md, built from what the code declares: the registry's analysis
classes (their default time limit, whether the first Ctrl-C ends them with their best answer, their batch items),
the command line (whether the command chooses its solver with ``--solver``) and the conformance suite's cases (the
progress phrase it waits for, the checks it runs). ``tests/test_architecture.py`` fails when the page's table is not
this one; ``python tests/contract_table.py`` prints it."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from conformance import builtin_cases  # noqa: E402

HEADER = ("| command | analysis | time limit (default) | first Ctrl-C | progress the suite waits for | `--solver` "
          "| batch item | conformance checks |")


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    from stormcf.cli import build_parser
    action = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _checks(case) -> str:
    checks = ["time limit", "SIGTERM", "Ctrl-C", "second Ctrl-C", "bad input"]
    if case.batch is not None:
        checks.append("batch of one")
    if case.single is not None:
        checks.append("schema")
    return ", ".join(checks)


def rows() -> list[str]:
    """One row per registered analysis, by command."""
    from stormcf.analysis import registry
    parsers, cases = _subparsers(), builtin_cases()
    lines = [HEADER, "|" + "---|" * (HEADER.count("|") - 1)]
    for command, analysis in sorted(registry().items()):
        case = cases.get(command)
        limit = f"{analysis.time_limit:g} s" if analysis.time_limit else "none"
        stop = "best checked answer, `interrupted`" if analysis.stoppable else "exit 130, no output"
        progress = ("-" if case is None else f"'{case.working}'" if case.working else "any progress line")
        solver = "yes" if "--solver" in parsers[command]._option_string_actions else "-"
        batch = (f"{analysis.items}" + (" (chunks at once)" if analysis.batched else "")) if analysis.items else "-"
        checks = "**none**" if case is None else _checks(case)
        lines.append(f"| `{command}` | `{analysis.__module__}.{analysis.__name__}` | {limit} | {stop} | {progress} "
                     f"| {solver} | {batch} | {checks} |")
    return lines


if __name__ == "__main__":
    print("\n".join(rows()))
