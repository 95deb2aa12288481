"""A data file keeps every run and inflates nothing, on any input (issue 50, "Nothing
lost, nothing inflated, bounded on any input"): a measured file under a directory
whose name is not UTF-8 is kept and reported; two ``pathprof combine`` at once add
each file once, and a killed one's claims are finished; a crafted file (contract
JSON nested 100,000 deep, a count near 2**63, a source blob that inflates to 100 MB,
a source that is not its hash's, values of the wrong type) is one line, never a
traceback, and never overwritten; a damaged target is not combined into; the
temporary files of killed saves go at the next save of any kind; ``erase`` in a
read-only directory is one line."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import textwrap
import time
import zlib
from pathlib import Path
from typing import Any

import pytest

from pathprof.data import building, files, store
from pathprof.data.profile import FunctionProfile
from pathprof.exceptions import DataError

from .test_run import pathprof_cli

SHAPES = '''
    def classify(n):
        if n < 0:
            return "negative"
        if n % 2:
            return "odd"
        return "even"


    def spin(n):
        total = 0
        for i in range(n):
            if i % 3:
                total += i
        return total
'''

MAIN = '''
    import shapes

    for n in range(-3, 10):
        shapes.classify(n)
    shapes.spin(7)
'''

#: classify runs 13 times (one path each), spin once (its loop cut into 9 paths)
CLASSIFY_RUNS = 13


def _project(directory: Path) -> Path:
    (directory / "shapes.py").write_text(textwrap.dedent(SHAPES))
    (directory / "main.py").write_text(textwrap.dedent(MAIN))
    return directory


def _cli(cwd: Path, *args: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    """``pathprof ARGS`` in ``cwd``, with ``env`` added to the environment."""
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    full = {**os.environ, "PATH": path, "COLUMNS": "160", **(env or {})}
    return subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=300)


def _totals(data_file: Path) -> dict[str, int]:
    """Each function's path executions (whole and cut) in ``data_file``."""
    found: dict[str, int] = {}
    for fn in store.read(str(data_file)).functions:
        found[fn.qualname] = (found.get(fn.qualname, 0) + sum(fn.counts.values())
                              + sum(fn.cuts.values()))
    return found


def _rows(path: Path, query: str, *args: object) -> list[tuple[object, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(query, args).fetchall()
    finally:
        db.close()


def _execute(path: Path, query: str, *args: object) -> None:
    db = sqlite3.connect(path)
    try:
        db.execute(query, args)
        db.commit()
    finally:
        db.close()


def _measured(directory: Path, name: str = ".pathprof") -> Path:
    """A data file of one run of the project in ``directory``."""
    _project(directory)
    pathprof_cli(directory, "run", "--data-file", name, "main.py")
    return directory / name


def _dead_pid() -> int:
    """The pid of a process of this host that has ended."""
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    return ended.pid


def _one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.splitlines()
    return line


REPORTS = [("report",), ("report", "--format", "json"), ("coverage", "-m"),
           ("coverage", "--format", "json"), ("html", "-d", "html"), ("lcov", "-o", "-"),
           ("xml", "-o", "-")]


# -- 1. A file under a directory whose name is not UTF-8 -------------------------------


@pytest.mark.skipif(os.name != "posix", reason="POSIX paths are bytes")
def test_a_file_under_a_directory_whose_name_is_not_utf8_is_kept_and_reported(
        tmp_path: Path) -> None:
    """The save used to raise UnicodeEncodeError (no data file, nothing saved aside,
    exit status 1); the name is kept as its bytes, and every report shows it, with
    ``\\udcXX`` escapes where its output must be UTF-8 (a UTF-8 locale's strict
    standard output, HTML, LCOV, XML, and JSON's own escapes)."""
    weird = os.fsencode(tmp_path) + b"/caf\xe9"
    try:
        os.mkdir(weird)
    except OSError:
        pytest.skip("this file system takes only UTF-8 names")
    with open(weird + b"/shapes.py", "w") as f:
        f.write(textwrap.dedent(SHAPES))
    (tmp_path / "main.py").write_text(
        f"import sys\nsys.path.insert(0, {os.fsdecode(weird)!r})\n"
        + textwrap.dedent(MAIN))
    ran = _cli(tmp_path, "run", "--source", str(tmp_path), "main.py")
    assert (ran.returncode, ran.stderr) == (0, "")
    data = tmp_path / ".pathprof"
    (stored,) = _rows(data, "SELECT file FROM module")
    assert stored == (weird + b"/shapes.py",)  # the path's own bytes
    (classify,) = [fn for fn in store.read(str(data)).functions
                   if fn.qualname == "classify"]
    assert os.fsencode(classify.file) == weird + b"/shapes.py"
    assert sum(classify.counts.values()) == CLASSIFY_RUNS
    shown = "caf\\udce9"
    strict = {"PYTHONIOENCODING": "utf-8:strict"}  # as in a UTF-8 locale
    for command in REPORTS:
        result = _cli(tmp_path, *command, env=strict)
        assert (result.returncode, result.stderr) == (0, ""), command
        if command[0] == "html":
            assert shown in (tmp_path / "html" / "index.html").read_text()
        else:
            assert shown in result.stdout, command
        if "json" in command:  # JSON's escape reads back as the name itself
            document = json.loads(result.stdout)
            assert os.fsdecode(weird + b"/shapes.py") in json.dumps(document,
                                                                    ensure_ascii=False)
    # Kept as it is through a second run and a combine.
    assert _cli(tmp_path, "run", "--append", "--source", str(tmp_path),
                "main.py").returncode == 0
    combined = _cli(tmp_path, "combine", "--data-file", "all.pathprof", ".pathprof")
    assert combined.returncode == 0, combined.stderr
    (again,) = [fn for fn in store.read(str(tmp_path / "all.pathprof")).functions
                if fn.qualname == "classify"]
    assert (again.file, sum(again.counts.values())) == (classify.file, 2 * CLASSIFY_RUNS)


# -- 2. Combines at once, and a killed combine ------------------------------------------


def _inputs(directory: Path, base: Path, count: int) -> dict[str, int]:
    """``count`` data files ``.pathprof.part<i>`` beside ``base``'s directory, each a
    run of its own (written through the store, as processes write them) holding
    ``base``'s counts; returns one file's totals."""
    measurement = store.read(str(base))
    (run,) = measurement.runs
    for index in range(count):
        own = store.RunInfo(run.started + index, [*run.argv, str(index)], run.python,
                            run.mode, run.metric, run.pid, run.hostname)
        store.write(str(directory / f".pathprof.part{index}"), own, measurement.functions,
                    measurement.sources)
    return _totals(base)


def _left(directory: Path) -> list[str]:
    """What is beside the data file but the project: inputs, claims, temporary files."""
    return sorted(p.name for p in directory.iterdir()
                  if p.name.startswith(".pathprof") and p.name not in (
                      ".pathprof", ".pathprof_cache"))


def _combined(result: subprocess.CompletedProcess[str]) -> int:
    """How many files a combine took; one that started after the other had claimed
    every file finds none, and says so as a combine with nothing to do does."""
    assert "Traceback" not in result.stderr
    if result.returncode == 1 and result.stdout == "":
        assert result.stderr == "pathprof: no data files to combine beside .pathprof\n"
        return 0
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    words = line.split()
    assert words[0] == "combined", line
    return int(words[1])


def test_two_combines_at_once_add_every_file_exactly_once(tmp_path: Path) -> None:
    """Both used to read every file and add it (counts doubled, no word), and the
    second to remove a file the first had removed (FileNotFoundError). Each file is
    claimed by one of them: the totals are the sum of the inputs, no more, no less,
    and the two say how many files each took."""
    base = _measured(tmp_path, "base.pathprof")
    files_per_round = 30
    for round_ in range(3):
        one = _inputs(tmp_path, base, files_per_round)
        data = tmp_path / ".pathprof"
        before = _totals(data) if data.exists() else {}
        env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable),
                                                      os.environ.get("PATH", "")])}
        both = [subprocess.Popen([sys.executable, "-m", "pathprof", "combine"], cwd=tmp_path,
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for _ in range(2)]
        results = []
        for process in both:
            out, err = process.communicate(timeout=300)
            results.append(subprocess.CompletedProcess(process.args, process.returncode,
                                                       out, err))
        assert sum(_combined(result) for result in results) == files_per_round, results
        assert _left(tmp_path) == [], results
        expected = {name: before.get(name, 0) + files_per_round * count
                    for name, count in one.items()}
        assert _totals(data) == expected, (round_, results)
        assert len(store.read(str(data)).runs) == files_per_round * (round_ + 1)


def _claim(path: Path, target: Path, pid: int) -> Path:
    """``path`` renamed as a combine of process ``pid`` into ``target`` claims it."""
    claimed = Path(f"{path}.{files.target_tag(str(target))}.{files.host()}.{pid}."
                   f"0123abcd{files.CLAIM}")
    path.rename(claimed)
    return claimed


def test_claims_a_killed_combine_left_are_finished_and_said(tmp_path: Path) -> None:
    base = _measured(tmp_path, "base.pathprof")
    one = _inputs(tmp_path, base, 3)
    data = tmp_path / ".pathprof"
    dead = _dead_pid()
    # part1: added, then killed before its claim was removed: the transaction that
    # added it left its mark in the data file's meta table.
    shutil.copy(tmp_path / ".pathprof.part1", tmp_path / "copy")
    assert _combined(pathprof_cli(tmp_path, "combine", ".pathprof.part1")) == 1
    (tmp_path / "copy").rename(tmp_path / ".pathprof.part1")
    added = _claim(tmp_path / ".pathprof.part1", data, dead)
    _execute(data, "INSERT INTO meta VALUES (?, '0')", f"combined {added.name}")
    # part0: claimed, never added (killed before its transaction).
    not_added = _claim(tmp_path / ".pathprof.part0", data, dead)
    # part2: claimed by a combine still running (this process): left to it.
    running = _claim(tmp_path / ".pathprof.part2", data, os.getpid())
    result = pathprof_cli(tmp_path, "combine")
    assert _combined(result) == 1
    notes = result.stderr.splitlines()
    assert (f"pathprof: a combine that ended (process {dead}) had claimed .pathprof.part0 "
            "and not added it; it was added now") in notes
    assert (f"pathprof: a combine that ended (process {dead}) had added .pathprof.part1 "
            "into .pathprof and not removed it; it was removed now") in notes
    assert len(notes) == 2
    assert not not_added.exists()
    assert not added.exists()
    assert running.exists()
    assert _totals(data) == {name: 2 * count for name, count in one.items()}
    assert _rows(data, "SELECT key FROM meta WHERE key LIKE 'combined %'") == []
    # erase leaves a running combine's claim too, and removes an ended one's.
    ended = _claim(Path(shutil.copy(running, tmp_path / ".pathprof.part3")), data, dead)
    assert pathprof_cli(tmp_path, "erase").returncode == 0
    assert running.exists()
    assert not ended.exists()
    assert not data.exists()


def _claims(directory: Path) -> int:
    return sum(1 for p in directory.iterdir() if p.name.endswith(files.CLAIM))


def test_a_combine_killed_anywhere_loses_and_inflates_nothing(tmp_path: Path) -> None:
    """SIGKILL a combine as it has claimed its files, and as it adds them (after one,
    after a few); the next combine finishes its work: every input counted once."""
    base = _measured(tmp_path, "base.pathprof")
    data = tmp_path / ".pathprof"
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable),
                                                  os.environ.get("PATH", "")])}
    expected: dict[str, int] = {}
    inputs = 40
    for added_before_kill in (0, 1, 5):
        one = _inputs(tmp_path, base, inputs)
        expected = {name: expected.get(name, 0) + inputs * count
                    for name, count in one.items()}
        killed = subprocess.Popen([sys.executable, "-m", "pathprof", "combine"],
                                  cwd=tmp_path, env=env, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        most = 0
        deadline = time.monotonic() + 120
        while killed.poll() is None and time.monotonic() < deadline:
            claims = _claims(tmp_path)
            most = max(most, claims)
            if most and (added_before_kill == 0 or most - claims >= added_before_kill):
                killed.send_signal(signal.SIGKILL)
                break
            time.sleep(0.0005)
        killed.wait()
        left = _left(tmp_path)
        finish = pathprof_cli(tmp_path, "combine")
        assert "Traceback" not in finish.stderr
        if any(name.endswith(files.CLAIM) for name in left):
            assert "a combine that ended (process " in finish.stderr
        assert [name for name in _left(tmp_path) if not name.endswith(".tmp")] == []
        assert _totals(data) == expected, (added_before_kill, left, finish.stderr)


def test_files_given_twice_or_gone_are_said_not_a_traceback(tmp_path: Path) -> None:
    base = _measured(tmp_path, "base.pathprof")
    one = _inputs(tmp_path, base, 1)
    result = pathprof_cli(tmp_path, "combine", ".pathprof.part0", ".pathprof.part0")
    assert _combined(result) == 1
    assert _totals(tmp_path / ".pathprof") == one
    missing = pathprof_cli(tmp_path, "combine", ".pathprof.part0", check=False)
    assert missing.returncode == 1
    assert _one_line(missing) == ("pathprof: no data file .pathprof.part0: run `pathprof "
                                  "run` first; nothing was combined")


# -- 3. Contract JSON nested 100,000 deep -----------------------------------------------


def _deep(data: Path, where: str) -> None:
    """Nest the contract of ``data``'s module 100,000 deep: a function's row
    (``function``) or the whole contract (``module``); the CRC-32 made to match."""
    ((blob,),) = _rows(data, "SELECT contract FROM module")
    nested = "[" * 100_000 + "]" * 100_000
    if where == "function":
        contract = json.loads(zlib.decompress(blob))
        contract[7][0] = nested
        text = json.dumps(contract)
    else:
        text = nested
    packed = zlib.compress(text.encode())
    _execute(data, "UPDATE module SET contract = ?, crc = ?", packed, zlib.crc32(packed))


@pytest.mark.parametrize("where", ["function", "module"])
def test_contract_json_nested_deeply_is_one_damaged_line_and_a_run_is_kept(
        tmp_path: Path, where: str) -> None:
    data = _measured(tmp_path)
    _deep(data, where)
    before = data.read_bytes()
    damaged = ("pathprof: .pathprof is damaged (a value nested too deeply to read); it was "
               "left untouched")
    for command in REPORTS:
        result = pathprof_cli(tmp_path, *command, check=False)
        assert result.returncode == 1, command
        assert _one_line(result) == damaged, command
    shutil.copy(data, tmp_path / "crafted")
    combined = pathprof_cli(tmp_path, "combine", "--data-file", "other", "crafted",
                            check=False)
    assert combined.returncode == 1
    assert _one_line(combined) == damaged.replace(".pathprof", "crafted") + (
        "; nothing was combined")
    assert (tmp_path / "crafted").read_bytes() == before
    assert not (tmp_path / "other").exists()
    # A run beside it keeps its run, saved aside, and says where.
    ran = pathprof_cli(tmp_path, "run", "main.py")
    line = _one_line(ran)
    assert line.startswith(f"pathprof: {tmp_path / '.pathprof'} is damaged (a value nested "
                           "too deeply to read); it was left untouched; this run's data "
                           "was saved to ")
    saved = Path(line.rsplit(" ", 1)[1])
    assert saved.name.startswith(".pathprof.saved.")
    assert _totals(saved)["classify"] == CLASSIFY_RUNS
    assert data.read_bytes() == before


# -- 4. Counts near 2**63 ---------------------------------------------------------------


def test_a_count_past_sqlites_integers_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    """Adding to a count near 2**63 used to make it a REAL (the file then read as
    damaged) or raise OverflowError: now the addition is refused in one line, the
    file is left as it was, and the run is saved aside."""
    data = _measured(tmp_path)
    near = 2**63 - 1  # the largest SQLite integer: any run adds past it
    (fid,) = _rows(data, "SELECT id FROM function WHERE qualname = 'classify'")[0]
    _execute(data, "UPDATE path SET count = ? WHERE function_id = ? AND rowid = "
             "(SELECT min(rowid) FROM path WHERE function_id = ?)", near, fid, fid)
    before = data.read_bytes()
    ran = pathprof_cli(tmp_path, "run", "--append", "main.py")
    line = _one_line(ran)
    assert line.startswith(f"pathprof: cannot add to {tmp_path / '.pathprof'}: a path's "
                           "count or time added to the file's would pass "
                           "9,223,372,036,854,775,807, the largest count a data file keeps; "
                           "nothing was added, and it was left as it was; this run's data "
                           "was saved to ")
    assert data.read_bytes() == before
    assert _totals(Path(line.rsplit(" ", 1)[1]))["classify"] == CLASSIFY_RUNS
    assert max(count for fn in store.read(str(data)).functions
               for count in fn.counts.values()) == near  # still readable, still exact
    # combine: the file that would pass it stays, and what was added is said.
    shutil.copy(data, tmp_path / ".pathprof.big")
    shutil.copy(data, tmp_path / ".pathprof.big2")
    combined = pathprof_cli(tmp_path, "combine", "--data-file", "sum.pathprof",
                            ".pathprof.big", ".pathprof.big2", check=False)
    assert combined.returncode == 1
    assert "1 of the 2 files were combined before, the others were left as they were" in (
        _one_line(combined))
    assert not (tmp_path / ".pathprof.big").exists()
    assert (tmp_path / ".pathprof.big2").read_bytes() == before
    assert _totals(tmp_path / "sum.pathprof") == _totals(data)
    # A profile whose own count passes it: one error, nothing written.
    (classify,) = [fn for fn in store.read(str(data)).functions if fn.qualname == "classify"]
    classify.counts = dict.fromkeys(classify.counts, 2**63)
    with pytest.raises(DataError, match="would pass 9,223,372,036,854,775,807"):
        store.write(str(tmp_path / "new.pathprof"), store.read(str(data)).runs, [classify],
                    {})
    assert not (tmp_path / "new.pathprof").exists()


# -- 5. combine into a damaged file -----------------------------------------------------


def test_combine_into_a_damaged_file_changes_nothing_and_says_so(tmp_path: Path) -> None:
    """It used to add into it, delete the source file, and then say the file "was left
    untouched"."""
    data = _measured(tmp_path)
    pathprof_cli(tmp_path, "run", "--data-file", ".pathprof.a", "main.py")
    _execute(data, "UPDATE source SET text = zeroblob(16)")
    before = data.read_bytes()
    source = (tmp_path / ".pathprof.a").read_bytes()
    result = pathprof_cli(tmp_path, "combine", check=False)
    assert result.returncode == 1
    line = _one_line(result)
    assert line.startswith("pathprof: .pathprof is damaged: source row '")
    assert "its text does not match its CRC-32" in line
    assert line.endswith("; it was left untouched; nothing was combined")
    assert data.read_bytes() == before
    assert (tmp_path / ".pathprof.a").read_bytes() == source
    assert _left(tmp_path) == [".pathprof.a"]


# -- 6. Temporary files of killed saves -------------------------------------------------


@pytest.mark.parametrize("save", ["append", "combine"])
def test_every_kind_of_save_removes_the_temporary_files_of_dead_writers(
        tmp_path: Path, save: str) -> None:
    data = _measured(tmp_path)
    if save == "combine":
        pathprof_cli(tmp_path, "run", "--data-file", ".pathprof.a", "main.py")
    host = building.HOST
    dead = _dead_pid()
    stale = [f".pathprof-{dead}-{host}-0badc0de.tmp", f".pathprof-{dead}-{host}-0badc0de"
             ".tmp-journal"]
    live = [f".pathprof-{os.getpid()}-{host}-0cafe0ff.tmp",  # a writer still running
            f".pathprof-{dead}-other_host-0badc0de.tmp"]  # another host's: cannot tell
    for name in stale + live:
        (tmp_path / name).write_bytes(b"half a data file")
    if save == "append":
        pathprof_cli(tmp_path, "run", "--append", "main.py")
    else:
        assert _combined(pathprof_cli(tmp_path, "combine")) == 1
    assert sorted(name for name in _left(tmp_path)) == sorted(live)
    assert _totals(data)["classify"] == 2 * CLASSIFY_RUNS


# -- 7. erase in a read-only directory --------------------------------------------------


def _as_without_overrides() -> list[str] | None:
    """A prefix that runs a command subject to file permissions (root is not, unless
    it drops CAP_DAC_OVERRIDE), or None where there is none."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return None
    probe = subprocess.run([setpriv, "--bounding-set=-dac_override,-dac_read_search",
                            "true"], capture_output=True)
    return ([setpriv, "--bounding-set=-dac_override,-dac_read_search"]
            if probe.returncode == 0 else None)


def test_erase_in_a_read_only_directory_is_one_line(tmp_path: Path) -> None:
    prefix = _as_without_overrides()
    if prefix is None:
        pytest.skip("no way to run as a user file permissions stop")
    directory = tmp_path / "ro"
    directory.mkdir()
    _measured(directory)
    shutil.copy(directory / ".pathprof", directory / ".pathprof.other")
    directory.chmod(0o555)
    try:
        result = subprocess.run([*prefix, sys.executable, "-m", "pathprof", "erase"],
                                cwd=directory, capture_output=True, text=True, timeout=120)
    finally:
        directory.chmod(0o755)
    assert result.returncode == 1
    assert _one_line(result) == ("pathprof: cannot remove .pathprof and 1 other file beside "
                                 "it (Permission denied); they were left as they were")
    assert (directory / ".pathprof").exists()
    assert (directory / ".pathprof.other").exists()


# -- 8. Blobs that inflate without bound, sources not their hash's, wrong types ---------


def test_a_source_blob_that_inflates_to_100_mb_is_refused_at_once(tmp_path: Path) -> None:
    """125 KB of zlib for 100 MB of blanks (CRC-32 valid) used to make ``coverage``
    take 38 s and 630 MB: a blob is read no further than a bound of its size."""
    data = _measured(tmp_path)
    ((digest, blob),) = _rows(data, "SELECT source_hash, text FROM source")
    text = zlib.decompress(blob) + b" " * (100 << 20)
    bomb = zlib.compress(text, 9)
    assert len(bomb) < 200_000
    _execute(data, "UPDATE source SET text = ?, crc = ?", bomb, zlib.crc32(bomb))
    before = data.read_bytes()
    started = time.monotonic()
    result = pathprof_cli(tmp_path, "coverage", check=False)
    took = time.monotonic() - started
    assert result.returncode == 1
    assert _one_line(result).startswith(
        f"pathprof: .pathprof is damaged: source row {digest!r}: its text does not "
        "decompress (it inflates to more than ")
    assert took < 30  # (seconds; a bounded read takes well under one)
    assert data.read_bytes() == before


def test_a_source_that_is_not_its_hashs_is_not_shown(tmp_path: Path) -> None:
    """A source row's text is checked against its hash before a report uses it: one
    that differs (planted) is left out, as a source the file does not hold; a run's
    own sources, decoded as Python decodes them (CRLF, a coding declaration, a
    byte-order mark), still match."""
    data = _measured(tmp_path)
    planted = zlib.compress(b"PLANTED = 'not the measured code'\n" * 20)
    _execute(data, "UPDATE source SET text = ?, crc = ?", planted, zlib.crc32(planted))
    (tmp_path / "shapes.py").write_text("# changed since the run\n")  # (no fallback)
    result = pathprof_cli(tmp_path, "html", "-d", "html")
    assert result.stderr == ""
    pages = "".join(p.read_text() for p in (tmp_path / "html").glob("*.html"))
    assert "PLANTED" not in pages
    for name, encoded in (("crlf", textwrap.dedent(SHAPES).replace("\n", "\r\n").encode()),
                          ("latin", b"# -*- coding: latin-1 -*-\n# caf\xe9\n"
                                    + textwrap.dedent(SHAPES).encode()),
                          ("bom", b"\xef\xbb\xbf" + textwrap.dedent(SHAPES).encode())):
        directory = tmp_path / name
        directory.mkdir()
        _project(directory)
        (directory / "shapes.py").write_bytes(encoded)
        pathprof_cli(directory, "run", "main.py")
        (directory / "shapes.py").write_text("# changed since the run\n")
        sources = store.read(str(directory / ".pathprof")).sources
        assert len(sources) == 1, name
        assert "def classify(n):" in next(iter(sources.values())), name


CRAFTED = [
    ("run argv not a list", "UPDATE run SET argv = '{\"a\": 1}'", "run row 1: "),
    ("run started not a time", "UPDATE run SET started = 'noon'", "run row 1: "),
    ("run pid a text", "UPDATE run SET pid = 'one'", "run row 1: "),
    ("context of no path", "INSERT INTO context SELECT function_id, 'path', '999999', 't' "
     "FROM path LIMIT 1", "context row 1: '999999' is not a path of "),
]


@pytest.mark.parametrize(("what", "sql", "said"), CRAFTED, ids=[c[0] for c in CRAFTED])
def test_values_of_the_wrong_type_are_one_damaged_line(tmp_path: Path, what: str, sql: str,
                                                       said: str) -> None:
    data = _measured(tmp_path)
    _execute(data, sql)
    for command in REPORTS:
        result = pathprof_cli(tmp_path, *command, check=False)
        assert result.returncode == 1, (what, command)
        line = _one_line(result)
        assert line.startswith(f"pathprof: .pathprof is damaged: {said}"), (what, line)


def _contract_row(data: Path) -> tuple[list[object], list[object]]:
    """The module contract of ``data`` (one module) and its first function's row."""
    ((blob,),) = _rows(data, "SELECT contract FROM module")
    contract = json.loads(zlib.decompress(blob))
    return contract, json.loads(contract[7][0])


def _set_row(data: Path, contract: list[object], row: list[object]) -> None:
    contract[7][0] = json.dumps(row)  # type: ignore[index]
    packed = zlib.compress(json.dumps(contract).encode())
    _execute(data, "UPDATE module SET contract = ?, crc = ?", packed, zlib.crc32(packed))


def _first_piece(row: list[object]) -> list[object]:
    return next(block[2][0] for block in row[7] if block[2])  # type: ignore[attr-defined]


CONTRACT_FIELDS = [
    # (what, how to change the row, a report that used to end in a traceback)
    ("a line that is text", lambda row: _first_piece(row).__setitem__(0, "2"), "html"),
    ("a first line that is a list", lambda row: row.__setitem__(1, []), "coverage"),
    ("a block number that is true", lambda row: row[8][0].__setitem__(1, True), "report"),
    ("an edge label that is a list", lambda row: row[8][0].__setitem__(2, ["x"]), "report"),
    ("a piece past the function's lines",
     lambda row: _first_piece(row).__setitem__(2, 10**7), "coverage"),
    ("a decision's tree nested 5,000 deep",
     lambda row: row[24][0].__setitem__(5, "!" * 5000 + "0"), "coverage --conditions"),
    ("a decision's tree naming a condition twice",
     lambda row: row[24][0].__setitem__(5, "&(0,0)"), "coverage --conditions"),
]


@pytest.mark.parametrize(("what", "change", "command"), CONTRACT_FIELDS,
                         ids=[c[0] for c in CONTRACT_FIELDS])
def test_a_contract_field_of_the_wrong_type_or_range_is_one_damaged_line(
        tmp_path: Path, what: str, change: Any, command: str) -> None:
    """Each of these used to reach a report as it was: a TypeError or RecursionError
    many frames down, or a loop over ten million lines."""
    _project(tmp_path)
    pathprof_cli(tmp_path, "run", "--conditions", "main.py")
    data = tmp_path / ".pathprof"
    contract, row = _contract_row(data)
    change(row)
    _set_row(data, contract, row)
    before = data.read_bytes()
    for shown in (command, "html -d html", "coverage -m", "report"):
        result = pathprof_cli(tmp_path, *shown.split(), check=False)
        assert result.returncode == 1, (what, shown, result.stdout[-300:])
        line = _one_line(result)
        assert line.startswith("pathprof: .pathprof is damaged: function row 1 ("), line
        assert "its contract is not a function's metadata (" in line
    assert data.read_bytes() == before


def test_what_pathprof_writes_it_reads_back_within_the_bounds() -> None:
    """A source too compressible to read back within the bound is not kept (reports
    then read it from its file); what is kept reads back."""
    from pathprof.data.modules import MAX_RATIO, Packed, inflation_bound

    repetitive = Packed("x = 0\n" * (1 << 20))  # 6 MB, compresses ~1000 times
    assert not repetitive.readable
    plain = Packed("".join(f"value_{i} = {i * 7919 % 10007}\n" for i in range(200_000)))
    assert plain.readable
    assert Packed(data=plain.data).text == plain.text
    assert inflation_bound(10) == 1 << 20
    assert inflation_bound(1 << 20) == MAX_RATIO << 20


def test_a_profile_with_a_name_of_surrogates_round_trips_through_the_store(
        tmp_path: Path) -> None:
    """The store keeps a name that is not UTF-8 as its bytes and reads the same text
    back (the run's file name, the host, a test's id as context)."""
    data = _measured(tmp_path)
    measurement = store.read(str(data))
    name = os.fsdecode(b"/somewhere/na\xefve/shapes.py")
    profiles = []
    for fn in measurement.functions:
        moved = FunctionProfile(name, fn.qualname, fn.first_line, fn.source_hash, fn.meta)
        moved.counts = dict(fn.counts)
        moved.contexts = {key: {os.fsdecode(b"test_\xff")} for key in fn.counts}
        profiles.append(moved)
    (run,) = measurement.runs
    run.hostname = os.fsdecode(b"h\xf6st")
    target = tmp_path / "moved.pathprof"
    store.write(str(target), run, profiles, {})
    again = store.read(str(target))
    assert {fn.file for fn in again.functions} == {name}
    assert again.runs[0].hostname == run.hostname
    assert {c for fn in again.functions for names in fn.contexts.values() for c in names} == {
        os.fsdecode(b"test_\xff")}
    assert socket.gethostname()  # (the real host is untouched)
