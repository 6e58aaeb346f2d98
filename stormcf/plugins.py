"""Analyses of other distributions: a package registers its task module (with its :class:`~stormcf.analysis.Analysis`)
in the entry point group ``stormcf.analyses`` and its command-line module (``register(subparsers)``) in
``stormcf.commands``; the registry and the command line then treat it as one of stormcf's own::

    # pyproject.toml of a plugin
    [project.entry-points."stormcf.analyses"]
    toy = "toy_analysis.task"
    [project.entry-points."stormcf.commands"]
    toy = "toy_analysis.cli"
"""
from __future__ import annotations

#: the entry point groups of plugins: their task modules and their command-line modules
ANALYSES, COMMANDS = "stormcf.analyses", "stormcf.commands"


def plugins(group: str) -> list[str]:
    """The modules other distributions register in the entry point ``group`` (:data:`ANALYSES` or
    :data:`COMMANDS`), ordered by entry point name."""
    from importlib.metadata import entry_points
    return [point.value for point in sorted(entry_points(group=group), key=lambda point: point.name)]
