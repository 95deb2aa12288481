"""Writers that append to one data file at the same time lose nothing, also when
the file does not exist yet (each used to build its own file and rename it over
the others': all runs but the last were lost)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pathprof.data import building, store

from .test_run import PROGRAMS, functions_by_name

WRITERS = 8


def _append(path: str, barrier: multiprocessing.synchronize.Barrier, number: int) -> None:
    barrier.wait()  # all writers start together
    run = store.RunInfo(float(number), [f"writer {number}"], "3", "path", None, os.getpid(),
                        "host")
    store.write(path, run, [], {}, append=True)


def test_writers_into_a_new_file_keep_every_run(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
    for round_ in range(6):
        path = str(tmp_path / f"round-{round_}.pathprof")
        barrier = context.Barrier(WRITERS)
        writers = [context.Process(target=_append, args=(path, barrier, n))
                   for n in range(WRITERS)]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(timeout=120)
        assert [w.exitcode for w in writers] == [0] * WRITERS
        runs = store.read(path).runs
        assert sorted(run.argv[0] for run in runs) == [f"writer {n}" for n in range(WRITERS)]
        # No temporary file is left beside it.
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            f"round-{r}.pathprof" for r in range(round_ + 1)]


def test_pathprof_runs_appending_to_a_new_file_keep_every_count(tmp_path: Path) -> None:
    for name in ("app.py", "helper.py"):
        (tmp_path / name).write_bytes((PROGRAMS / name).read_bytes())
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable),
                                                  os.environ.get("PATH", "")])}
    runs = [subprocess.Popen([sys.executable, "-m", "pathprof", "run", "--append",
                              "--data-file", "shared.pathprof", "app.py", "700"],
                             cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for _ in range(WRITERS)]
    for run in runs:
        out, err = run.communicate(timeout=180)
        assert run.returncode == 0, err
        assert out == b"2 400\n"
    assert len(store.read(str(tmp_path / "shared.pathprof")).runs) == WRITERS
    assert functions_by_name(tmp_path / "shared.pathprof")["classify"].total == 700 * WRITERS


def test_without_hard_links_the_new_file_is_created_in_place(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system without hard links: the empty file is made under SQLite's lock
    (a second creator finds it made and leaves it), and the appended runs are kept."""
    def no_links(source: str, target: str) -> None:
        raise PermissionError("no hard links here")

    monkeypatch.setattr(os, "link", no_links)
    path = str(tmp_path / "no-links.pathprof")
    for number in range(3):
        run = store.RunInfo(float(number), [f"run {number}"], "3", "path", None, 1, "host")
        store.write(path, run, [], {}, append=True)
    assert [run.argv[0] for run in store.read(path).runs] == ["run 0", "run 1", "run 2"]
    building.create_in_place(path)  # a late creator changes nothing
    assert len(store.read(path).runs) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["no-links.pathprof"]
