"""``stormcf schema [--out FILE | --path]``: the JSON Schema of every document stormcf writes (docs/json.md), shipped
inside the package, for scripts that validate what they read."""
from __future__ import annotations

import argparse

from .common import add_output_argument


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("schema", help="print the JSON Schema of stormcf's JSON documents (--out FILE: write it; "
                                      "--path: where the installed file is)")
    where = p.add_mutually_exclusive_group()
    add_output_argument(where, "--out", "-o", metavar="FILE", default=None, help="write the schema to FILE")
    where.add_argument("--path", action="store_true", help="print the path of the installed schema file")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report import schema_path, write_text
    path = schema_path()
    if args.path:
        print(path)
    elif args.out:
        write_text(path.read_text(encoding="utf-8"), args.out)
        print(f"the JSON Schema of stormcf's documents written to {args.out}")
    else:
        print(path.read_text(encoding="utf-8").rstrip("\n"))
    return 0
