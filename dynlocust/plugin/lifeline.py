"""What holds before Locust's own handlers exist: the first SIGTERM, and the link of a forked worker to its parent.

Locust installs its SIGTERM handler only once `init` has returned and the run has been started. A SIGTERM before
that killed the process outright: exit 143 instead of 4, no exit code line, and the workers `--processes` had
forked stayed alive. `install_early` runs with the first dynlocust code of a process (`dynlocust run`'s entry, the
scenario locustfile's import): a SIGTERM that arrives before `init` ends the process with exit code 4 and its
line, at once (`os._exit`): nothing has been created yet, so nothing needs unwinding. From `init` on,
`safety.route_interrupts` routes SIGTERM as it routes Ctrl-C, so that set-up in progress is torn down through
`quitting`.

A master killed with SIGKILL runs no handler at all. The embedded endpoint then stops by itself once its stdin
pipe ends (`--exit-with-parent`). A forked worker has no such pipe, so right after the fork the kernel is asked to
kill it when its parent dies (Linux's `prctl(PR_SET_PDEATHSIG)`; elsewhere, from `init` on, a greenlet watches the
parent's pid: `watch_parent_if_unlinked`). It is
killed with SIGKILL, not asked to stop: without a master it has nothing left to do, and each window it closed is
already on disk in its spool.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from types import FrameType

from dynlocust.exit_codes import ExitCode, say

PR_SET_PDEATHSIG = 1
"""From Linux's <linux/prctl.h>: the signal a process gets when the thread that created it exits."""
PARENT_POLL_SECONDS = 0.5
"""Without prctl: how often a forked worker looks at its parent's pid."""

_parent: list[int] = []
"""The pid of the process dynlocust started in (of the parent, in a process it forked)."""
_forked: dict[str, bool] = {}
"""In a process dynlocust's process forked: whether the kernel will kill it with its parent."""


def install_in_locust() -> None:
    """`install_early`, in a process that Locust runs (its main module is loading the locustfile); a program that
    only imports the plugin, such as a test, keeps its signals and its forks as they are."""
    if "locust.main" in sys.modules:
        install_early()


def install_early() -> None:
    """End the process with exit code 4 on a SIGTERM from now until `init` takes the signal over, and have every
    process it forks from now on die with it (idempotent).

    A SIGTERM handler someone else installed is left alone, and so is any thread but the main one (signals are the
    main thread's)."""
    if not _parent:
        _parent.append(os.getpid())
        # at the fork itself: a worker's `init` comes only once it has reached its master, which may be gone already
        os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _before_run)


def _before_run(_signum: int, _frame: FrameType | None) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut this exit short
    sys.stderr.write("dynlocust: stopped by SIGTERM before the run began; no table was created\n")
    sys.stderr.flush()
    say(ExitCode.ABORTED, sys.stdout)  # said: `dynlocust run` does not add its own
    sys.stdout.flush()
    # not SystemExit: it would unwind whatever the signal interrupted, such as gevent's patching of `threading`
    # (the interpreter's exit then waits forever on a lock half patched) or an import holding its lock
    os._exit(ExitCode.ABORTED)


def _before_fork() -> None:
    _parent[:] = [os.getpid()]


def _after_fork_in_child() -> None:
    _forked["linked"] = _set_parent_death_signal(signal.SIGKILL)
    if _forked["linked"] and os.getppid() != _parent[0]:  # it died before the kernel was asked to tell
        os.kill(os.getpid(), signal.SIGKILL)


def watch_parent_if_unlinked() -> None:
    """In a forked process the kernel cannot kill with its parent (not Linux): watch the parent's pid instead."""
    if _forked.get("linked") is False:
        import gevent

        gevent.spawn(_watch_parent, _parent[0])


def _set_parent_death_signal(signum: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    import gevent

    while os.getppid() == parent:
        gevent.sleep(PARENT_POLL_SECONDS)
    os.kill(os.getpid(), signal.SIGKILL)
