"""Whether the data folder can be written: at start (`data_dir_problem`, which refuses to
start) and while the server runs (`FolderWatch`). A folder made read-only while the server
runs (`chmod`, a disk remounted) is not noticed by the store: SQLite writes on through the
files it holds open, and only the next start refused the folder. The server's own screen
now says so while it lasts, checked by the same probe at most once every `every_s`."""

from __future__ import annotations

import asyncio
import logging
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

logger = logging.getLogger(__name__)

FOLDER_CHECK_S = 30.0  # Settings.data_folder_check_s: how often a running server looks


def write_refused(data_dir: Path, make: bool = True) -> OSError | None:
    """Why a file cannot be made in `data_dir` (made if missing, with `make`), found by
    making one; None when it can."""
    try:
        if make:
            data_dir.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=data_dir):
            pass
    except OSError as exc:
        return exc
    return None


def data_dir_problem(data_dir: Path) -> str | None:
    """Why no game could be kept in `data_dir` (a read-only disk, a path that is a file, a
    folder of another user), found by writing a probe file there: said at start in one
    line, where the store, the learning store or the first action each failed later with a
    traceback of their own. None when the folder can be written."""
    refused = write_refused(data_dir)
    if refused is None:
        return None
    return (
        f"the data folder {data_dir} cannot be written ({refused.strerror or refused}): no "
        "game could be kept. Start with --data-dir FOLDER naming a folder this user may "
        "write, or make this one writable"
    )


class FolderWatch:
    """The running server's look at its data folder: `problem()` says, in words for the
    server's own screen, why it can no longer be written (None while it can), probing it at
    most once every `every_s` seconds off the event loop; the log says when it turns
    unwritable and when it is writable again. `clock`: monotonic seconds (tests pass one)."""

    def __init__(
        self,
        data_dir: Path,
        every_s: float = FOLDER_CHECK_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.data_dir = data_dir
        self.every_s = every_s
        self.clock = clock
        self._checked_at: float | None = None
        self._problem: str | None = None

    async def problem(self) -> str | None:
        now = self.clock()
        if self._checked_at is not None and now - self._checked_at < self.every_s:
            return self._problem
        self._checked_at = now  # a request meanwhile reads the last answer, not a new probe
        # never made here: a folder gone while the server runs (moved, deleted, its disk
        # unmounted) read as writable once an empty one stood in its place
        refused = await asyncio.to_thread(write_refused, self.data_dir, False)
        problem = None if refused is None else self._words(refused)
        if problem is not None and self._problem is None:
            logger.warning("%s", problem)
        elif problem is None and self._problem is not None:
            logger.info("the data folder %s can be written again", self.data_dir)
        self._problem = problem
        return problem

    def _words(self, refused: OSError) -> str:
        if isinstance(refused, FileNotFoundError):
            return (
                f"The data folder {self.data_dir} is no longer there (moved, deleted, or its "
                "disk unmounted). The games go on being stored in the files the server holds "
                "open, but its next start would make an empty folder there and show none of "
                "them: put the folder back before the server is restarted."
            )
        return (
            f"The data folder {self.data_dir} can no longer be written "
            f"({refused.strerror or refused}). The games go on being stored in the files "
            "the server holds open, but its next start will refuse this folder: make it "
            "writable again before the server is restarted."
        )
