"""pathprof.measure.handover: the marks by which a run's processes tell each other where
they stand, and the hand-over of a child's counts. ``wait_limit`` reads its variable
(a number of seconds, 0 or more) or falls back to 10; ``pending``, ``forking``,
``announce``, ``saving`` and ``unmark`` make, rename and remove the marks the module
docstring names; ``parent`` tells ``pending``, ``gone`` and ``saved`` apart;
``hand_over`` leaves a child's file to a parent that will save, says where it is for a
parent that is gone, and otherwise adds it into the data file itself (exactly once);
``wait``, ``live_children`` and ``remove_stale`` see only processes that still run.
A process that has ended is one this test forked and reaped; no test waits for time to
pass (``wait`` is only asked with a timeout of 0, or with ``give_up``)."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from pathprof.data import files, store
from pathprof.data.measurement import RunInfo
from pathprof.measure import handover
from pathprof.measure.handover import (
    announce,
    forking,
    hand_over,
    live_children,
    parent,
    pending,
    remove_stale,
    saving,
    unmark,
    wait,
    wait_limit,
)

RUN = "run1"


@pytest.fixture(scope="module")
def gone_pid() -> int:
    """The pid of a process that has ended, and was waited for."""
    if not hasattr(os, "fork"):
        pytest.skip("needs fork")
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


@pytest.fixture
def data_file(tmp_path: Path) -> str:
    directory = tmp_path / "project"
    directory.mkdir()
    return str(directory / ".pathprof")


def _names(data_file: str) -> list[str]:
    directory, base = os.path.split(data_file)
    return sorted(name[len(base) + 1:] for name in os.listdir(directory)
                  if name.startswith(base + "."))


def _mark(data_file: str, state: str, pid: int, run: str = RUN) -> str:
    path = files.mark_name(data_file, run, state, pid=pid)
    Path(path).touch()
    return path


HOST = files.host()


# -- how long to wait ------------------------------------------------------------------

@pytest.mark.parametrize(("value", "seconds"), [
    (None, 10.0), ("", 10.0), ("2.5", 2.5), ("0", 0.0), ("30", 30.0), ("-1", 10.0),
    ("nan", 10.0), ("inf", 10.0), ("soon", 10.0)])
def test_the_wait_limit_is_the_variables_seconds_or_ten(
        monkeypatch: pytest.MonkeyPatch, value: str | None, seconds: float) -> None:
    if value is None:
        monkeypatch.delenv("PATHPROF_CHILDREN_WAIT", raising=False)
    else:
        monkeypatch.setenv("PATHPROF_CHILDREN_WAIT", value)
    assert wait_limit() == seconds
    assert handover.WAIT_VARIABLE == "PATHPROF_CHILDREN_WAIT"


# -- the marks -------------------------------------------------------------------------

def test_pending_and_forking_make_their_marks(data_file: str) -> None:
    me = os.getpid()
    made = pending(data_file, RUN)
    assert made == f"{data_file}.child-{RUN}.{HOST}.{me}.pending"
    assert os.path.isfile(made)
    first, second = forking(data_file, RUN), forking(data_file, RUN)
    assert first != second  # each fork its own
    assert first is not None
    assert second is not None
    for mark in (first, second):
        assert os.path.isfile(mark)
        assert mark.startswith(f"{data_file}.child-{RUN}.{HOST}.{me}.")
        assert mark.endswith(".forking")


def test_a_mark_that_cannot_be_made_is_none(tmp_path: Path) -> None:
    nowhere = str(tmp_path / "missing" / ".pathprof")
    assert pending(nowhere, RUN) is None
    assert forking(nowhere, RUN) is None
    announce(nowhere, RUN)  # nothing to make it in: nothing happens
    saving(nowhere, RUN)
    assert not (tmp_path / "missing").exists()


def test_a_forked_child_announces_itself_by_renaming_its_parents_mark(data_file: str
                                                                       ) -> None:
    forked = forking(data_file, RUN)
    assert forked is not None
    announce(data_file, RUN, pid=4242, forked=forked)
    assert not os.path.exists(forked)
    assert _names(data_file) == [f"child-{RUN}.{HOST}.4242.running"]


def test_a_child_announces_itself_without_a_mark_to_rename(data_file: str) -> None:
    announce(data_file, RUN)
    announce(data_file, RUN, pid=77, forked=data_file + ".gone.forking")
    assert _names(data_file) == sorted([f"child-{RUN}.{HOST}.{os.getpid()}.running",
                                        f"child-{RUN}.{HOST}.77.running"])


def test_a_child_saving_renames_its_mark_or_makes_one(data_file: str) -> None:
    me = os.getpid()
    announce(data_file, RUN)
    saving(data_file, RUN)
    assert _names(data_file) == [f"child-{RUN}.{HOST}.{me}.saving"]
    saving(data_file, "run2")  # never announced (a child the parent outran)
    assert _names(data_file) == [f"child-{RUN}.{HOST}.{me}.saving",
                                 f"child-run2.{HOST}.{me}.saving"]


def test_unmark_removes_this_childs_marks_of_its_run_alone(data_file: str) -> None:
    me = os.getpid()
    announce(data_file, RUN)
    forking(data_file, RUN)  # a fork of its own that failed
    pending(data_file, RUN)  # a parent's mark: not a child's
    _mark(data_file, "running", 4242)
    announce(data_file, "run2")
    unmark(data_file, RUN)
    assert _names(data_file) == sorted([f"child-{RUN}.{HOST}.{me}.pending",
                                        f"child-{RUN}.{HOST}.4242.running",
                                        f"child-run2.{HOST}.{me}.running"])


# -- where the parent stands -----------------------------------------------------------

def test_the_parent_is_pending_while_its_mark_names_a_process_that_runs(
        data_file: str, gone_pid: int) -> None:
    assert parent(data_file, RUN) == "saved"  # no pending mark: it saved
    _mark(data_file, "pending", gone_pid)
    assert parent(data_file, RUN) == "gone"
    pending(data_file, RUN)
    assert parent(data_file, RUN) == "pending"  # one of them runs
    assert parent(data_file, "other") == "saved"


def test_a_parent_on_another_host_is_taken_to_run(data_file: str) -> None:
    path = f"{data_file}.child-{RUN}.another-host.{os.getpid()}.pending"
    Path(path).touch()
    assert parent(data_file, RUN) == "pending"


# -- handing a child's counts over -----------------------------------------------------

def _run(argv: list[str]) -> RunInfo:
    return RunInfo(started=1.0, argv=argv, python="3", mode="path", metric=None,
                   pid=os.getpid(), hostname=socket.gethostname())


def _child_file(data_file: str, argv: list[str]) -> str:
    path = files.parallel_name(data_file, "child", run=RUN, fresh=True)
    store.write(path, _run(argv), [], {})
    return path


def test_a_childs_file_is_left_to_a_parent_that_will_save(data_file: str) -> None:
    pending(data_file, RUN)
    path = _child_file(data_file, ["child"])
    told: list[str] = []
    hand_over(data_file, RUN, path, told.append)
    assert told == []
    assert os.path.isfile(path)
    assert not os.path.exists(data_file)


def test_a_childs_file_whose_parent_is_gone_stays_for_combine(data_file: str,
                                                              gone_pid: int) -> None:
    _mark(data_file, "pending", gone_pid)
    path = _child_file(data_file, ["child"])
    told: list[str] = []
    hand_over(data_file, RUN, path, told.append)
    assert told == [f"the parent process of this run ended before it saved into "
                    f"{data_file}: this process's counts are in {path}, which `pathprof "
                    "combine` adds"]
    assert os.path.isfile(path)
    assert not os.path.exists(data_file)


def test_a_childs_file_after_its_parent_saved_is_added_once(data_file: str) -> None:
    store.write(data_file, _run(["parent"]), [], {})
    path = _child_file(data_file, ["child"])
    told: list[str] = []
    hand_over(data_file, RUN, path, told.append)
    assert told == []
    assert not os.path.exists(path)
    assert sorted(run.argv[0] for run in store.read(data_file).runs) == ["child", "parent"]
    assert [n for n in _names(data_file) if not n.startswith("lock")] == []
    hand_over(data_file, RUN, path, told.append)  # gone: another taker had it
    assert sorted(run.argv[0] for run in store.read(data_file).runs) == ["child", "parent"]


def test_a_childs_file_that_cannot_be_added_stays_and_is_said(data_file: str) -> None:
    Path(data_file).write_text("not a data file")
    path = _child_file(data_file, ["child"])
    told: list[str] = []
    hand_over(data_file, RUN, path, told.append)
    assert len(told) == 1
    assert told[0].startswith(f"cannot add this process's counts into {data_file} (")
    assert told[0].endswith(f"); they are in {path}, which `pathprof combine` adds")
    assert os.path.isfile(path)
    assert Path(data_file).read_text() == "not a data file"


# -- waiting for children, and stale marks ---------------------------------------------

def test_waiting_ends_at_once_when_no_child_runs(data_file: str, gone_pid: int) -> None:
    assert wait(data_file) == []
    _mark(data_file, "saving", gone_pid)  # ended: not waited for
    _mark(data_file, "running", os.getpid())
    assert wait(data_file, exclude=os.getpid()) == []  # this process aside
    assert wait(data_file, states=("saving",)) == []


def test_the_marks_of_children_still_alive_are_what_waiting_leaves(data_file: str) -> None:
    alive = os.getppid()  # (a process that runs throughout the test)
    path = _mark(data_file, "saving", alive)
    other_run = _mark(data_file, "running", alive, run="run2")
    assert wait(data_file, run=RUN, timeout=0) == [
        files.Mark(path, RUN, HOST, alive, "saving")]
    assert wait(data_file, run=RUN, give_up=lambda: True) == [
        files.Mark(path, RUN, HOST, alive, "saving")]
    assert [m.path for m in wait(data_file, timeout=0)] == sorted([path, other_run])
    assert wait(data_file, run=RUN, states=("running",), timeout=0) == []


def test_live_children_are_the_sorted_pids_of_announced_children_that_run(
        data_file: str, gone_pid: int) -> None:
    alive = os.getppid()
    _mark(data_file, "running", alive)
    _mark(data_file, "saving", 1)
    _mark(data_file, "running", os.getpid())  # this process
    _mark(data_file, "running", gone_pid)
    _mark(data_file, "pending", alive)  # a parent's mark
    forking(data_file, RUN)  # not announced yet
    assert live_children(data_file, RUN) == sorted({1, alive})
    assert live_children(data_file, "run2") == []


def test_stale_marks_of_this_host_go_and_live_ones_stay(data_file: str, gone_pid: int
                                                        ) -> None:
    alive = os.getppid()
    dead_running = _mark(data_file, "running", gone_pid)
    dead_forking = files.mark_name(data_file, RUN, "forking", pid=gone_pid)
    Path(dead_forking).touch()
    live = _mark(data_file, "saving", alive)
    elsewhere = f"{data_file}.child-{RUN}.another-host.{gone_pid}.running"
    Path(elsewhere).touch()
    mine = forking(data_file, RUN)
    remove_stale(data_file)
    assert not os.path.exists(dead_running)
    assert not os.path.exists(dead_forking)
    for kept in (live, elsewhere, mine):
        assert kept is not None
        assert os.path.exists(kept)
    remove_stale(data_file, own_forks=True)  # this process measures no more children
    assert mine is not None
    assert not os.path.exists(mine)
    assert os.path.exists(live)


def test_a_gone_parents_pending_mark_stays_while_a_child_of_its_run_runs(
        data_file: str, gone_pid: int) -> None:
    alive = os.getppid()
    parents = _mark(data_file, "pending", gone_pid)
    other_parents = _mark(data_file, "pending", gone_pid, run="run2")
    child = _mark(data_file, "running", alive)
    remove_stale(data_file)
    assert os.path.exists(parents)  # its child still runs, and will look at it
    assert not os.path.exists(other_parents)
    os.unlink(child)
    remove_stale(data_file)
    assert not os.path.exists(parents)
