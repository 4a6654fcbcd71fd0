"""A worker process (the import process: Tables._planned) ends when the server that
started it dies. A server killed with SIGKILL runs no shutdown: its ProcessPoolExecutor's
worker waited on its task queue for good (the worker holds both ends of that pipe, so it
never reads an end of file), and with it multiprocessing's resource tracker, which waits
for every holder of its pipe: about 40 MB per kill, until someone killed them by hand.

`end_with_parent` is the pool's initializer: on Linux the kernel sends the worker SIGKILL
when its parent dies (prctl PR_SET_PDEATHSIG); elsewhere, or where prctl is refused, a
daemon thread watches the parent's pid and ends the worker once it changes. Either way
the tracker then reads the end of its pipe and exits too."""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import signal
import sys
import threading
import time

logger = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
# how often the fallback looks at its parent: a dead server's worker lingers at most this
PARENT_CHECK_S = 1.0


def end_with_parent(parent_pid: int) -> None:
    """Make this process end when `parent_pid`, the server that started it, dies. Call it
    first thing in the worker (a ProcessPoolExecutor initializer)."""
    if not _kernel_kills_on_parent_death():
        threading.Thread(
            target=_watch_parent, args=(parent_pid,), name="parent-watch", daemon=True
        ).start()
    # the parent may have died before the line above held: then nobody would signal us
    if os.getppid() != parent_pid:
        os._exit(1)


def _kernel_kills_on_parent_death() -> bool:
    """Ask Linux to SIGKILL this process when its parent dies; False where it cannot.
    (The signal follows the parent thread that started the worker: the server's event
    loop thread, which lives as long as the server.)"""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError) as exc:
        logger.warning("prctl unavailable (%s): the import worker watches its parent", exc)
        return False


def _watch_parent(parent_pid: int) -> None:
    """End this process once its parent is no longer `parent_pid` (it died and the
    worker was handed to init or a subreaper)."""
    while os.getppid() == parent_pid:
        time.sleep(PARENT_CHECK_S)
    os._exit(1)
