"""Figures of results (matplotlib, the ``plot`` extra): one place that finds pyplot, tells the image format of a file
name, and writes figures atomically.

A figure is written to exactly the file named: its format is the file's extension (``.png``, ``.pdf``, ``.svg``, any
format matplotlib writes), and a name without an extension gets PNG (matplotlib alone would write ``name.png``
instead). An extension matplotlib cannot write is refused before any work is done (:func:`figure_format`).
"""
from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from .errors import OptionError, OutputError
from .report import atomic_output

#: the format of a figure file without an extension
DEFAULT_FORMAT = "png"


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the non-interactive Agg back end."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise OptionError("plots need matplotlib (pip install 'stormcf[plot]')") from None
    return plt


def figure_formats() -> dict[str, str]:
    """Extension -> description of the formats matplotlib writes."""
    pyplot()
    from matplotlib.backend_bases import FigureCanvasBase
    return FigureCanvasBase.get_supported_filetypes()


def figure_format(out: str | os.PathLike) -> str:
    """The format a figure written to ``out`` gets: its extension, or PNG without one. Raises
    :class:`~stormcf.errors.OutputError` for an extension matplotlib cannot write."""
    suffix = Path(out).suffix.lower().lstrip(".")
    if not suffix:
        return DEFAULT_FORMAT
    formats = figure_formats()
    if suffix not in formats:
        raise OutputError(f"{out}: unknown image format '.{suffix}' (formats: {', '.join(sorted(formats))})")
    return suffix


def save_figure(fig: Any, out: str | os.PathLike, dpi: int = 120) -> str:
    """Write ``fig`` to exactly the file ``out`` (atomically) and close it; returns the format written."""
    fmt = figure_format(out)
    image = io.BytesIO()                # formats that seek while they write (PNG) reach a FIFO too
    try:
        fig.savefig(image, format=fmt, dpi=dpi)
        with atomic_output(out) as tmp:
            Path(tmp).write_bytes(image.getvalue())
    finally:
        pyplot().close(fig)
    return fmt
