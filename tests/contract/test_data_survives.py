"""A run's data survives what the program and the machine do (issue 23 §3): saving
faults injected for real (a full file system, a file size limit, a path that cannot
be a file, kill -9 while a data file is built), damaged data files, and counts
beyond a float's range."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest

import pathprof
from pathprof.data import building

from ..test_run import pathprof_cli
from . import WORK

PROGRAM = """
    import sys
""" + WORK + """
    print(work(int(sys.argv[1])))
    sys.exit(int(sys.argv[2]))
"""


def _write_program(directory: Path) -> None:
    (directory / "prog.py").write_text(textwrap.dedent(PROGRAM))


def _run(directory: Path, *args: str, preexec: object = None,
         write_bytecode: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not write_bytecode:
        # Under a file size limit, Python writes a .pyc cut at the limit (a short write
        # it does not check) that every later import of the module fails on
        # ("marshal data too short"): pathprof's own, after a change to its source.
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-m", "pathprof", "run", *args], cwd=directory,
                          env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=preexec)  # type: ignore[arg-type]


def _saved_to(stderr: str) -> Path:
    lines = [line for line in stderr.splitlines() if line.startswith("pathprof: ")]
    assert len(lines) == 1, stderr
    assert "this run's data was saved to " in lines[0], stderr
    return Path(lines[0].rsplit("this run's data was saved to ", 1)[1])


def _work_total(data_file: Path) -> int:
    return {fn.qualname: fn.total for fn in pathprof.load(str(data_file)).functions}["work"]


@contextlib.contextmanager
def _small_file_system(directory: Path, size: str = "48k") -> Iterator[Path]:
    directory.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs",
                              str(directory)], capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({mounted.stderr.strip()}); "
                    "the file size limit test covers a full disk")
    try:
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], capture_output=True)


def test_a_full_file_system_keeps_the_data_elsewhere_and_the_exit_status(tmp_path: Path
                                                                        ) -> None:
    with _small_file_system(tmp_path / "small") as small:
        _write_program(small)
        (small / "filler").write_bytes(b"x" * 40_000)  # leaves too little for a data file
        result = _run(small, "prog.py", "30", "3")
        assert result.returncode == 3  # the program's own exit status
        assert result.stdout == "300\n"
        assert "Traceback" not in result.stderr
        saved = _saved_to(result.stderr)
        assert str(small / ".pathprof") in result.stderr  # the file it could not write
        assert not str(saved).startswith(str(small))
        assert _work_total(saved) == 31
        saved.unlink()


def test_a_file_size_limit_is_one_line_and_the_exit_status_kept(tmp_path: Path) -> None:
    """``ulimit -f``: every write past 8 KiB fails, everywhere; nothing can be saved,
    and pathprof says so in one line (Python ignores SIGXFSZ: writes fail with EFBIG)."""
    _write_program(tmp_path)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    result = _run(tmp_path, "--no-cache", "prog.py", "30", "4", preexec=limit,
                  write_bytecode=False)
    assert result.returncode == 4
    assert result.stdout == "300\n"
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"pathprof: cannot write {tmp_path / '.pathprof'}")


@pytest.mark.parametrize("sigxfsz", ["ignored", "default"])
def test_where_no_file_can_grow_the_run_is_lost_in_one_line(tmp_path: Path,
                                                           sigxfsz: str) -> None:
    """``ulimit -f 0``: no file can grow anywhere, so neither the data file nor a file
    beside it nor the temporary directory (``tempfile`` finds none) takes the run:
    one line says it is lost and why, and the exit status is the program's. SIGXFSZ
    ignored, as ``trap '' XFSZ`` in a shell leaves it, or at its default: Python
    ignores it as it starts either way, so a write past the limit fails (EFBIG)
    instead of killing the process."""
    _write_program(tmp_path)

    def limit() -> None:
        signal.signal(signal.SIGXFSZ,
                      signal.SIG_IGN if sigxfsz == "ignored" else signal.SIG_DFL)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))

    result = _run(tmp_path, "--no-cache", "prog.py", "30", "4", preexec=limit,
                  write_bytecode=False)
    assert result.returncode == 4
    assert result.stdout == "300\n"
    lines = [line for line in result.stderr.splitlines() if line]
    assert len(lines) == 1, result.stderr
    assert lines[0] == (f"pathprof: cannot write {tmp_path / '.pathprof'}: disk I/O error "
                        "(files cannot grow past 0 bytes here: ulimit -f); nowhere else "
                        "could take this run's data either: it is lost")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["prog.py"]  # nothing left


def test_a_data_file_path_that_cannot_be_a_file(tmp_path: Path) -> None:
    _write_program(tmp_path)
    (tmp_path / "plain_file").write_text("")
    result = _run(tmp_path, "--data-file", "plain_file/.pathprof", "prog.py", "30", "0")
    assert result.returncode == 0
    assert "Traceback" not in result.stderr
    saved = _saved_to(result.stderr)
    assert _work_total(saved) == 31
    saved.unlink()


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_data_files_follow_the_umask(tmp_path: Path, umask: int) -> None:
    _write_program(tmp_path)
    result = _run(tmp_path, "prog.py", "3", "0", preexec=lambda: os.umask(umask))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / ".pathprof").stat().st_mode & 0o777 == 0o666 & ~umask


BUILDER = """
import sys, time
from pathprof.data import building

def fill(db):
    db.execute("CREATE TABLE filler (x)")
    db.executemany("INSERT INTO filler VALUES (?)", [("x" * 1000,)] * 2000)
    print("building", flush=True)
    time.sleep(60)

building.build_and_rename(sys.argv[1], fill)
"""


def test_what_kill_9_leaves_while_a_data_file_is_built_is_removed_by_the_next_run(
        tmp_path: Path) -> None:
    _write_program(tmp_path)
    builder = subprocess.Popen([sys.executable, "-c", BUILDER, str(tmp_path / ".pathprof")],
                               stdout=subprocess.PIPE, text=True)
    assert builder.stdout is not None
    assert builder.stdout.readline() == "building\n"
    left = sorted(p.name for p in tmp_path.glob(".pathprof-*"))
    builder.send_signal(signal.SIGKILL)
    builder.wait()
    assert left  # the file being built (and its journal)
    assert all(building.TEMP.fullmatch(name) for name in left)
    # a file another process is still building stays
    alive = tmp_path / f".pathprof-{os.getpid()}-{building.HOST}-0123abcd.tmp"
    alive.write_bytes(b"")
    old = tmp_path / ".pathprof-ab_cd123.tmp"  # the naming of earlier versions, a day old
    old.write_bytes(b"")
    os.utime(old, (time.time() - 86400, time.time() - 86400))
    result = _run(tmp_path, "prog.py", "3", "0")
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in tmp_path.glob(".pathprof-*")) == [alive.name]


_FIRST_PATH = "WHERE rowid = (SELECT min(rowid) FROM path WHERE kind = 'path')"
#: "[]" compressed, with its right CRC-32: a blob that passes for one until decoded
_NOT_A_MODULE = zlib.compress(b"[]")
DAMAGE = {
    "contract does not match its crc": "UPDATE module SET contract = zeroblob(16)",
    "contract is not metadata": (f"UPDATE module SET contract = x'{_NOT_A_MODULE.hex()}', "
                                 f"crc = {zlib.crc32(_NOT_A_MODULE)}"),
    "function row is not its contract's": "UPDATE function SET blocks = blocks + 1",
    "source does not match its crc": "UPDATE source SET text = zeroblob(16)",
    "path is not a number": f"UPDATE path SET path = 'abc' {_FIRST_PATH}",
    "path is negative": f"UPDATE path SET path = '-5' {_FIRST_PATH}",
    "count is not a count": "UPDATE path SET count = 'lots'",
    "path beyond the function's": f"UPDATE path SET path = '999999' {_FIRST_PATH}",
}


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
@pytest.mark.parametrize("command", [("report",), ("coverage",), ("html",), ("lcov",),
                                     ("xml",), ("report", "--format", "json")])
def test_a_damaged_data_file_is_one_clear_error_from_every_command(
        tmp_path: Path, damage: str, command: tuple[str, ...]) -> None:
    _write_program(tmp_path)
    assert _run(tmp_path, "prog.py", "30", "0").returncode == 0
    data = tmp_path / ".pathprof"
    db = sqlite3.connect(data)
    db.execute(DAMAGE[damage])
    db.commit()
    db.close()
    before = data.read_bytes()
    result = pathprof_cli(tmp_path, *command, check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("pathprof: .pathprof is damaged: ")
    assert " row " in lines[0]
    assert data.read_bytes() == before


@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_run_does_not_replace_a_damaged_data_file(tmp_path: Path, damage: str) -> None:
    """A plain run (no --append) replaces a data file of this schema, never a damaged
    one: it is reported as every command reports it and left untouched, and the run's
    data goes beside it."""
    _write_program(tmp_path)
    assert _run(tmp_path, "prog.py", "30", "0").returncode == 0
    data = tmp_path / ".pathprof"
    db = sqlite3.connect(data)
    db.execute(DAMAGE[damage])
    db.commit()
    db.close()
    before = data.read_bytes()
    result = _run(tmp_path, "prog.py", "30", "3")
    assert result.returncode == 3  # the program's own exit status
    assert result.stdout == "300\n"
    assert "Traceback" not in result.stderr
    saved = _saved_to(result.stderr)
    assert f"pathprof: {data} is damaged: " in result.stderr
    assert " row " in result.stderr
    assert data.read_bytes() == before
    assert saved.parent == tmp_path
    assert _work_total(saved) == 31


def test_erase_refuses_a_directory(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "kept").write_text("")
    result = pathprof_cli(tmp_path, "erase", "--data-file", "results", check=False)
    assert result.returncode == 1
    assert result.stderr == ("pathprof: results is a directory, not a data file; it was "
                             "left untouched\n")
    assert (tmp_path / "results" / "kept").exists()


def test_path_and_edge_data_are_not_mixed(tmp_path: Path) -> None:
    _write_program(tmp_path)
    assert _run(tmp_path, "prog.py", "30", "0").returncode == 0
    result = _run(tmp_path, "--append", "--mode", "edge", "prog.py", "30", "0")
    assert result.returncode == 0
    assert "holds path-mode data: an edge-mode run cannot be added" in result.stderr
    saved = _saved_to(result.stderr)
    assert {run.mode for run in pathprof.load(str(tmp_path / ".pathprof")).runs} == {"path"}
    combined = pathprof_cli(tmp_path, "combine", str(saved), check=False)
    assert combined.returncode == 1
    assert "cannot combine path-mode and edge-mode data" in combined.stderr
    assert saved.exists()


def test_counts_beyond_a_floats_range(tmp_path: Path) -> None:
    """2**1030 paths possible: every ratio is computed on integers."""
    decisions = "\n".join(f"    if c[{i}]: x = {i}" for i in range(1030))
    (tmp_path / "wide.py").write_text(f"def f(c):\n{decisions}\n    return 0\n")
    (tmp_path / "prog.py").write_text("import wide\nwide.f([0] * 1030)\n")
    (tmp_path / "test_wide.py").write_text("import wide\n\ndef test_f():\n"
                                           "    assert wide.f([1] * 1030) == 0\n")
    pathprof_cli(tmp_path, "run", "prog.py")
    for command in (("coverage",), ("coverage", "-m"), ("html",), ("report",), ("xml",),
                    ("lcov",), ("coverage", "--format", "json")):
        result = pathprof_cli(tmp_path, *command)
        assert "Error" not in result.stderr
    assert "<0.1%" in pathprof_cli(tmp_path, "coverage").stdout
    # each next path is 1030 decisions long: 100 listed, not all 1030 (430 MB of JSON)
    [wide] = json.loads(result.stdout)["files"][0]["functions"]
    assert (len(wide["next_paths"]), wide["next_paths_more"], wide["next_paths_unfound"],
            wide["basis_dimension"] - wide["basis_covered"]) == (100, 930, 0, 1030)
    assert "and 1,025 more independent paths to find" in pathprof_cli(
        tmp_path, "coverage", "-m").stdout
    from ..test_pytest_plugin import pytest_in

    result = pytest_in(tmp_path, "--pathprof=wide.py", "test_wide.py")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "INTERNALERROR" not in result.stdout


def test_a_read_only_directory_keeps_the_data_elsewhere(tmp_path: Path) -> None:
    """A read-only bind mount (file permissions alone do not stop root, as tests here run)."""
    project = tmp_path / "project"
    project.mkdir()
    _write_program(project)
    bound = subprocess.run(["mount", "--bind", str(project), str(project)],
                           capture_output=True, text=True)
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount here ({bound.stderr.strip()})")
    try:
        made_ro = subprocess.run(["mount", "-o", "remount,ro,bind", str(project)],
                                 capture_output=True, text=True)
        if made_ro.returncode != 0:
            pytest.skip(f"cannot make a mount read-only here ({made_ro.stderr.strip()})")
        result = _run(project, "--no-cache", "prog.py", "30", "5")
        assert result.returncode == 5
        assert result.stdout == "300\n"
        assert "Traceback" not in result.stderr
        saved = _saved_to(result.stderr)
        assert str(project / ".pathprof") in result.stderr
        assert _work_total(saved) == 31
        saved.unlink()
    finally:
        subprocess.run(["umount", str(project)], capture_output=True)
