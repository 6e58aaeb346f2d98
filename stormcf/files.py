"""What a path names, for the readers and writers of users' files: a regular file (written atomically, read as a
file), or something else that a rename must not replace and a reader must not wait on forever: a device
(``/dev/null``, ``/dev/full``), a FIFO, a socket, or a process's file descriptor (``/dev/stdout``, ``/dev/fd/3``)."""
from __future__ import annotations

import os
import re
import stat
import sys
from pathlib import Path


def written_in_place(out: str | os.PathLike) -> bool:
    """Whether ``out`` is written through rather than replaced: an existing file that is not a regular file or a
    directory (a device, a FIFO), or a process's file descriptor: a rename would put a regular file in its place."""
    path = Path(out)
    if names_descriptor(path):
        return True
    try:
        return file_kind(path) not in (None, "file", "directory")
    except OSError:
        return False


def names_descriptor(path: str | os.PathLike) -> bool:
    """Whether ``path`` is, or links to, an entry of a process's ``/proc/PID/fd`` (``/dev/stdout``, ``/dev/fd/1``)."""
    return _descriptor(Path(path)) is not None


def _descriptor(path: Path) -> tuple[int, int] | None:
    """(process id, descriptor) of the ``/proc/PID/fd/N`` entry that ``path`` is or links to."""
    for _ in range(40):                       # the kernel's limit of links followed in one path
        folder = re.fullmatch(r"/proc/(\d+)(?:/task/\d+)?/fd", os.path.realpath(path.parent))
        if folder and path.name.isdigit():
            return int(folder.group(1)), int(path.name)
        if not path.is_symlink():
            return None
        path = path.parent / os.readlink(path)
    return None


def opened_as(out: str | os.PathLike) -> Path:
    """The path to open to write to ``out``: ``out`` itself, except for this process's stdout and stderr
    (``/dev/stdout``, ``/dev/fd/2``), which are the descriptors of ``sys.stdout`` and ``sys.stderr``: stormcf points
    descriptors 1 and 2 elsewhere while a command runs (:func:`stormcf.console.native_output`), and what Python
    printed so far is flushed first, so that it comes before."""
    found = _descriptor(Path(out))
    if found is None or found[0] != os.getpid() or found[1] not in (1, 2):
        return Path(out)
    stream = sys.stdout if found[1] == 1 else sys.stderr
    try:
        stream.flush()
        return Path(f"/proc/self/fd/{stream.fileno()}")
    except (AttributeError, ValueError, OSError):    # not a file (pytest's capture): the descriptor itself
        return Path(out)


#: what :func:`file_kind` calls the file types of ``stat``
_KINDS = ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "FIFO"),
          (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"), (stat.S_ISSOCK, "socket"))


def file_kind(path: str | os.PathLike) -> str | None:
    """What ``path`` names once links are followed: ``"file"``, ``"directory"``, ``"FIFO"``, ``"character device"``,
    ``"block device"``, ``"socket"``; None when nothing is there. Other failures to look (a name too long, a loop of
    links, no permission) raise :class:`OSError`."""
    try:
        mode = os.stat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return None
    return next(name for test, name in _KINDS if test(mode))
