"""``stormcf examples [--copy DIR]``: the example inputs shipped with stormcf (models, strategies, paths, batches,
properties, event logs, set-cover instances), listed, or copied to ``DIR/prism_models/`` to edit them."""
from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

from ..errors import OutputError
from ..examples import EXAMPLES, EXAMPLES_FOLDER, example_path, list_examples
from .common import add_json_argument, add_output_argument, emit


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("examples", help="list the shipped example inputs, or copy them to DIR/prism_models/")
    add_output_argument(p, "--copy", kind="directory", metavar="DIR", default=None,
                        help=f"copy the examples to DIR/{EXAMPLES_FOLDER}/ (files that exist there are kept)")
    add_json_argument(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from ..report import Summary
    names = list_examples()
    files: list[dict[str, Any]] = [{"name": name, "path": str(example_path(name)),
                                    "bytes": example_path(name).stat().st_size, "description": EXAMPLES.get(name, "")}
                                   for name in names]
    folder = example_path(names[0]).parent
    facts: dict = {"folder": str(folder), "files": files, "copied_to": None, "copied": [], "kept": []}
    if args.copy is not None:
        copied, kept = copy_examples(Path(args.copy))
        target = Path(args.copy) / EXAMPLES_FOLDER
        facts.update(copied_to=str(target), copied=copied, kept=kept)
        lines = [f"copied {len(copied)} example inputs to {target}/"
                 + (f"; kept {len(kept)} files that exist there (not overwritten)" if kept else "")]
    else:
        width = max(len(f"{EXAMPLES_FOLDER}/{name}") for name in names)
        lines = [f"{len(names)} example inputs ship with stormcf (in {folder}):"]
        lines += [f"  {EXAMPLES_FOLDER + '/' + f['name']:{width}}  {f['description']}" for f in files]
        lines += [f"A command given {EXAMPLES_FOLDER}/NAME reads the shipped file when ./{EXAMPLES_FOLDER}/NAME does "
                  "not exist; stormcf examples --copy DIR copies them all to DIR/prism_models/ (to edit them)."]
    emit(Summary("examples", facts, lines), args)
    return 0


def copy_examples(folder: Path) -> tuple[list[str], list[str]]:
    """Copy every example into ``folder/prism_models/`` (created), each atomically; a file that exists there is
    kept, whatever it holds (it may be the user's edit). Returns the names copied and the names kept."""
    from ..report import atomic_output
    target = folder / EXAMPLES_FOLDER
    if target.exists() and not target.is_dir():
        raise OutputError(f"{target}: exists and is not a folder")
    try:
        target.mkdir(exist_ok=True)
    except OSError as err:
        raise OutputError(f"{target}: cannot create the folder ({err.strerror})") from None
    copied, kept = [], []
    for name in list_examples():
        destination = target / name
        if destination.exists():
            kept.append(name)
            continue
        with atomic_output(destination) as tmp:
            shutil.copyfile(example_path(name), tmp)
        copied.append(name)
    return copied, kept
