"""The watchdog a Dask worker runs each copy under, so that no copy outlives it.

``python -m pathprof.parallel.lifeline FD SCRATCH -- COMMAND...`` runs ``COMMAND``
(the copy: standard streams, working directory and environment are this
process's) and watches the pipe end ``FD``, whose other end the worker holds:

* the worker writes a byte: stop the copy (SIGTERM: it saves what it measured and
  ends) and end as it ends; the worker still wants its data;
* the pipe closes with no byte, while the copy runs: the worker is gone (its
  process died, and the kernel closed its end). Stop the copy, wait for it, remove
  the copy's scratch directory ``SCRATCH`` (no one will read it) and end.

This process ends as the copy ended: with its exit status, or killed by the same
signal. Standard library only, and it imports nothing else of pathprof.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence

__all__ = ["main"]

#: Seconds a stopped copy gets to save and end before it is killed.
STOP_TIMEOUT = 60.0


def _watch(lifeline: int, copy: subprocess.Popen, gone: threading.Event) -> None:
    """Wait for a byte or the end of the pipe, then stop the copy if it still runs
    (killing it after :data:`STOP_TIMEOUT`); ``gone`` says it was the end."""
    try:
        note = os.read(lifeline, 1)
    except OSError:
        note = b""
    if copy.poll() is not None:
        return  # it ended first: the worker closing its end afterwards means nothing
    if not note:
        gone.set()
    copy.send_signal(signal.SIGTERM)
    try:
        copy.wait(STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        copy.kill()


def main(argv: Sequence[str]) -> int:
    """Run the copy under the lifeline ``argv`` describes (see the module
    docstring); its exit status, or minus the signal that ended it."""
    if len(argv) < 4 or argv[2] != "--":
        print("usage: python -m pathprof.parallel.lifeline FD SCRATCH -- COMMAND...",
              file=sys.stderr)
        return 2
    lifeline, scratch, command = int(argv[0]), argv[1], list(argv[3:])
    copy = subprocess.Popen(command)
    gone = threading.Event()
    threading.Thread(target=_watch, args=(lifeline, copy, gone), daemon=True).start()
    status = copy.wait()
    if gone.is_set():
        shutil.rmtree(scratch, ignore_errors=True)
    return status


def _end(status: int) -> None:
    """End with ``status``, or die of the signal a negative one names."""
    if status < 0:
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
        status = 128 - status
    sys.exit(status)


if __name__ == "__main__":
    _end(main(sys.argv[1:]))
