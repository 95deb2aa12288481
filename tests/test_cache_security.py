"""Nobody else can make pathprof run code as the user, and a damaged cache entry is
never used (issue 50, its first "Severe" section).

Tested as two real users where the tests run as root: another user's files are made
with ``os.chown`` (65534, ``nobody``; 65533 when ``nobody`` is the victim), and the
victim is root or, through ``setpriv``, ``nobody``. Each crafted entry is what anyone who
can read the source can compute: a well-formed entry, written by the pathprof under
test, for the real source's path and SHA-256, whose code prints ``PLANTED``.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import pathprof
from pathprof import config, messages
from pathprof.config import CACHE_DIR_VARIABLE, CacheDir, cache_dir, read_config
from pathprof.measure import codecache
from pathprof.measure.importhook import InstrumentOptions, instrumented_code

ROOT = os.geteuid() == 0 if hasattr(os, "geteuid") else False
SETPRIV = shutil.which("setpriv")
needs_root = pytest.mark.skipif(not ROOT, reason="needs root, to make files of another "
                                "uid (os.chown) and to run as one")
NOBODY = 65534


def _runs_as_nobody() -> bool:
    """Whether this interpreter and the pathprof under test start as ``nobody``: the
    interpreter's own files (a pyenv build's libpython under root's home) may be root's
    alone, and then no test can run pathprof as another user."""
    if not (ROOT and SETPRIV):
        return False
    source = str(Path(pathprof.__file__).resolve().parent.parent)
    probe = subprocess.run(
        [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c", "import pathprof"], cwd="/",
        env={**os.environ, "PYTHONPATH": source}, capture_output=True, timeout=60)
    return probe.returncode == 0


needs_setpriv = pytest.mark.skipif(not _runs_as_nobody(), reason="needs root, setpriv "
                                   "(util-linux) and an interpreter nobody can start, to "
                                   "run pathprof as another user")
OTHER = 65533  #: the other user, when nobody is the victim

LIB = ('def greet(name):\n    if name:\n        return "hello " + name\n'
       '    return "hello nobody"\n')
APP = 'from lib import greet\n\nprint(greet("you"), greet(""))\n'
OUTPUT = "hello you hello nobody\n"
EVIL = 'print("PLANTED: code another user wrote ran")\n\n\ndef greet(name):\n    return "PWNED"\n'
SOURCE = str(Path(pathprof.__file__).resolve().parent.parent)  #: the pathprof under test


@pytest.fixture
def base() -> Iterator[Path]:
    """A directory root owns under /tmp that every user can reach (``tmp_path`` is
    root's alone)."""
    directory = Path(tempfile.mkdtemp(prefix="pathprof-security-", dir="/tmp"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process: no cache directory checked or refused yet, no line said yet, no
    PATHPROF_CACHE_DIR, and the cache directory (not __pycache__) written to."""
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(codecache, "_said", False)
    monkeypatch.setattr(codecache, "_ready", set())
    monkeypatch.setattr(codecache, "_refused", set(), raising=False)
    monkeypatch.setattr(messages, "_said", set())
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)


def _run(cwd: Path, *args: str, user: int | None = None, umask: int | None = None,
         env: dict[str, str] | None = None, **variables: str
         ) -> subprocess.CompletedProcess[str]:
    """``pathprof ARGS`` in ``cwd``, as ``user`` (setpriv) when given, with the
    environment variables ``env`` and ``variables`` set."""
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith("PATHPROF_") and k != "PYTHONPATH"}
    environment.update({"PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": SOURCE,
                        "HOME": str(cwd), **(env or {}), **variables})
    command = [sys.executable, "-m", "pathprof", *args]
    if user is not None:
        assert SETPRIV is not None
        command = [SETPRIV, f"--reuid={user}", f"--regid={user}", "--clear-groups", *command]
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=120, preexec_fn=None if umask is None
                          else lambda: os.umask(umask))


def _project(directory: Path, owner: int | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "lib.py").write_text(LIB)
    (directory / "app.py").write_text(APP)
    if owner is not None:
        _chown(directory, owner)
    return directory


def _chown(path: Path, uid: int) -> None:
    """``chown -R uid:uid path`` (symbolic links themselves, not their targets)."""
    os.lchown(path, uid, uid)
    if path.is_dir() and not path.is_symlink():
        for child in path.rglob("*"):
            os.lchown(child, uid, uid)


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.pathprof-*.pyc"))


def _stamps(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for p in _entries(directory)}


def _craft(entry: Path, lib: Path, directory: Path) -> None:
    """Make ``entry`` a well-formed entry for ``lib``'s source (its path and SHA-256, as
    anyone who can read it can compute) whose code is :data:`EVIL`, written by the
    pathprof under test (``directory``: its cache directory, if ``entry`` is in one)."""
    digest = hashlib.sha256(lib.read_bytes()).digest()
    code = compile(EVIL, str(lib), "exec")
    where = codecache.Places([str(entry)], [str(entry)], str(directory))
    assert codecache.write(where, digest, str(lib), code) is not None


def _planted_cache(project: Path, scratch: Path, at: Path, owner: int | None) -> Path:
    """A cache directory at ``at`` holding a crafted entry for ``project``'s lib.py where
    ``pathprof run`` looks for one (learnt from a run with a cache directory of root's,
    ``scratch``), all of ``owner``'s (None: left root's). Returns the entry."""
    learnt = _run(project, "run", "app.py", PATHPROF_CACHE_DIR=str(scratch))
    assert (learnt.returncode, learnt.stdout) == (0, OUTPUT), learnt.stderr
    (project / ".pathprof").unlink()
    (entry,) = _entries(scratch)
    _craft(entry, project / "lib.py", scratch)
    shutil.copytree(scratch, at)
    if owner is not None:
        _chown(at, owner)
    return at / entry.relative_to(scratch)


def _paths_counted(data_file: Path) -> list[int]:
    functions = pathprof.load(str(data_file)).functions
    return sorted(p.count for f in functions if f.qualname == "greet" for p in f.paths)


def _is_right(done: subprocess.CompletedProcess[str]) -> None:
    """The program ran as written: its own output, nothing crafted."""
    assert "PLANTED" not in done.stdout + done.stderr
    assert "PWNED" not in done.stdout
    assert (done.returncode, done.stdout) == (0, OUTPUT), done.stderr


# -- Planted configuration and cache -----------------------------------------------

#: (the victim, the other user): root (files of nobody's planted), and nobody run
#: through setpriv (files of uid 65533's planted).
VICTIMS = [pytest.param(0, NOBODY, marks=needs_root, id="root"),
           pytest.param(NOBODY, OTHER, marks=needs_setpriv, id="nobody")]


@pytest.mark.parametrize(("victim", "other"), VICTIMS)
def test_a_configuration_and_cache_planted_above_a_project_are_never_taken(
        base: Path, victim: int, other: int) -> None:
    """In a world-writable directory (as /tmp), another user puts a pyproject.toml and a
    .pathprof_cache with a crafted entry above a project that has no pyproject.toml:
    the search stops at the shared directory, the crafted code never runs, the run is
    right and cached in the project's own directory, and one line says why."""
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    project = _project(shared / "project", owner=victim)
    _planted_cache(project, base / "scratch", shared / ".pathprof_cache", other)
    (shared / "pyproject.toml").write_text("[tool.pathprof]\n")
    os.chown(shared / "pyproject.toml", other, other)
    for _ in range(2):
        done = _run(project, "run", "app.py", user=None if victim == 0 else victim)
        _is_right(done)
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"pathprof: not reading {shared / 'pyproject.toml'}: "
                                   f"everyone can write {shared} (mode 1777)"), lines
    assert _paths_counted(project / ".pathprof") == [1, 1]
    (own,) = _entries(project / ".pathprof_cache")
    assert own.stat().st_uid == victim


@pytest.mark.parametrize(("victim", "other"), VICTIMS)
def test_a_shared_current_directory_hands_over_neither_configuration_nor_cache(
        base: Path, victim: int, other: int) -> None:
    """The program is run in a shared, world-writable directory where another user put
    a pyproject.toml and a .pathprof_cache with a crafted entry: neither is taken (one
    line for each), and the run is right."""
    shared = base / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    _project(shared)
    for name in ("lib.py", "app.py"):
        os.chown(shared / name, victim, victim)
    learnt = _run(shared, "run", "app.py", PATHPROF_CACHE_DIR=str(base / "scratch"))
    assert (learnt.returncode, learnt.stdout) == (0, OUTPUT), learnt.stderr
    (shared / ".pathprof").unlink()
    (entry,) = _entries(base / "scratch")
    _craft(entry, shared / "lib.py", base / "scratch")
    shutil.copytree(base / "scratch", shared / ".pathprof_cache")
    _chown(shared / ".pathprof_cache", other)
    (shared / "pyproject.toml").write_text("[tool.pathprof]\n")
    os.chown(shared / "pyproject.toml", other, other)
    done = _run(shared, "run", "app.py", user=None if victim == 0 else victim)
    _is_right(done)
    lines = done.stderr.splitlines()
    assert len(lines) == 2, done.stderr
    assert lines[0].startswith(f"pathprof: not reading {shared / 'pyproject.toml'}: "
                               f"everyone can write {shared} (mode 1777)"), lines
    assert lines[1].startswith(f"pathprof: not using the cache directory "
                               f"{shared / '.pathprof_cache'}: it belongs to uid {other}"
                               ), lines
    assert _paths_counted(shared / ".pathprof") == [1, 1]


@needs_root
@pytest.mark.parametrize("how", ["--cache-dir", CACHE_DIR_VARIABLE, "cache_dir"])
def test_a_cache_directory_that_belongs_to_another_user_is_refused_however_chosen(
        base: Path, how: str) -> None:
    """A cache directory another user created first (the flag, the variable or the
    configuration naming it): refused with one line, even for an entry in it that the
    user's own uid owns; the run is right and uncached."""
    project = _project(base / "project")
    theirs = base / "theirs"
    _planted_cache(project, base / "scratch", theirs, owner=None)
    os.chown(theirs, NOBODY, NOBODY)  # the directory theirs, the entries root's
    args: list[str] = ["run", "app.py"]
    env: dict[str, str] = {}
    if how == "--cache-dir":
        args = ["run", "--cache-dir", str(theirs), "app.py"]
    elif how == CACHE_DIR_VARIABLE:
        env[CACHE_DIR_VARIABLE] = str(theirs)
    else:
        (project / "pyproject.toml").write_text(f"[tool.pathprof]\ncache_dir = '{theirs}'\n")
    stamps = _stamps(theirs)
    for _ in range(2):
        done = _run(project, *args, env=env)
        _is_right(done)
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith(f"pathprof: not using the cache directory {theirs}: it "
                                   f"belongs to uid {NOBODY}"), lines
        assert CACHE_DIR_VARIABLE in lines[0]
    assert _stamps(theirs) == stamps  # nothing written there either
    assert _paths_counted(project / ".pathprof") == [1, 1]


# -- Damaged entries -----------------------------------------------------------------


@pytest.mark.parametrize("place", ["cache directory", "__pycache__"])
def test_an_entry_whose_body_changed_by_one_byte_is_not_used_and_is_rewritten(
        tmp_path: Path, place: str) -> None:
    """One byte of a string constant in an entry's body changed: the program's output
    is unchanged, the entry is rewritten, and the next run hits it."""
    project = _project(tmp_path / "project")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    env = {"PYTHONDONTWRITEBYTECODE": ""} if place == "__pycache__" else {}
    where = project / ("__pycache__" if place == "__pycache__" else ".pathprof_cache")
    first = _run(project, "run", "app.py", env=env)
    assert (first.returncode, first.stdout, first.stderr) == (0, OUTPUT, "")
    (entry,) = _entries(where)
    data = bytearray(entry.read_bytes())
    at = data.index(b"hello nobody")
    data[at] = ord("j")  # "jello nobody"
    entry.write_bytes(bytes(data))
    damaged = _stamps(where)
    again = _run(project, "run", "app.py", env=env)
    assert (again.returncode, again.stdout, again.stderr) == (0, OUTPUT, "")
    assert _stamps(where) != damaged
    assert b"jello" not in entry.read_bytes()  # rewritten whole
    rewritten = _stamps(where)
    third = _run(project, "run", "app.py", env=env)
    assert (third.returncode, third.stdout, third.stderr) == (0, OUTPUT, "")
    assert _stamps(where) == rewritten  # a hit: read, not written again


@pytest.mark.usefixtures("fresh")
def test_no_damaged_byte_of_an_entry_is_ever_unmarshalled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every single byte of an entry flipped, and every truncation: the entry is not
    used, and marshal.loads never sees anything but the intact body (on damaged bytes
    it can crash the interpreter)."""
    lib = tmp_path / "lib.py"
    lib.write_text(LIB)
    options = InstrumentOptions(cache_dir=CacheDir(str(tmp_path / "cache"), True))
    instrumented_code(lib.read_bytes(), str(lib), options)
    (entry,) = _entries(tmp_path / "cache")
    good = entry.read_bytes()
    where = codecache.places(str(lib), options.tag(), options.cache_dir)
    digest = hashlib.sha256(lib.read_bytes()).digest()
    real = marshal.loads
    seen: list[bytes] = []

    def recording(data: Any) -> Any:
        seen.append(bytes(data))
        return real(data)

    monkeypatch.setattr(codecache, "marshal", SimpleNamespace(loads=recording,
                                                              dumps=marshal.dumps))
    assert codecache.read(where, digest, str(lib)) is not None
    (intact,) = seen

    def guarded(data: Any) -> Any:
        if bytes(data) != intact:
            raise AssertionError("damaged bytes were unmarshalled")
        return real(data)

    monkeypatch.setattr(codecache, "marshal", SimpleNamespace(loads=guarded,
                                                              dumps=marshal.dumps))
    for index in range(len(good)):
        for flip in (0x01, 0x80):
            damaged = bytearray(good)
            damaged[index] ^= flip
            entry.write_bytes(bytes(damaged))
            assert codecache.read(where, digest, str(lib)) is None, index
    for length in range(len(good)):
        entry.write_bytes(good[:length])
        assert codecache.read(where, digest, str(lib)) is None, length
    entry.write_bytes(good)
    assert codecache.read(where, digest, str(lib)) is not None


# -- Entries another user could have written ------------------------------------------


def _crafted_then(tmp_path: Path, change: str) -> tuple[Path, Path, InstrumentOptions]:
    """A cache directory of the user's with a crafted entry for lib.py (its code sets
    PLANTED), then ``change``d so that someone else could have written it."""
    lib = tmp_path / "lib.py"
    lib.write_text(LIB)
    directory = tmp_path / "cache"
    options = InstrumentOptions(cache_dir=CacheDir(str(directory), True))
    instrumented_code(lib.read_bytes(), str(lib), options)
    (entry,) = _entries(directory)
    if change == "a symbolic link to it":
        elsewhere = tmp_path / "elsewhere"
        elsewhere.mkdir()
        target = elsewhere / entry.name
        _craft(target, lib, tmp_path / "unused")  # (written as __pycache__ is)
        entry.unlink()
        entry.symlink_to(target)
        return lib, entry, options
    _craft(entry, lib, directory)
    if change == "owned by another user":
        os.chown(entry, NOBODY, NOBODY)
    elif change == "group-writable":
        entry.chmod(0o664)
    elif change == "world-writable":
        entry.chmod(0o646)
    return lib, entry, options


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize("change", [
    pytest.param("owned by another user", marks=needs_root),
    "group-writable", "world-writable", "a symbolic link to it"])
def test_an_entry_another_user_could_have_written_is_never_executed(
        tmp_path: Path, change: str) -> None:
    """A well-formed entry (header and body hash right) that another user owns, that
    others can write, or a symbolic link in an entry's place (even to an entry of the
    user's own): not used; the write that follows replaces it (the link itself, not its
    target), and the next read is a hit."""
    lib, entry, options = _crafted_then(tmp_path, change)
    target = entry.resolve() if entry.is_symlink() else None
    planted = target.read_bytes() if target is not None else None
    stats: dict[str, int] = {}
    code = instrumented_code(lib.read_bytes(), str(lib), options, stats)
    namespace: dict[str, Any] = {}
    exec(code, namespace)  # (the crafted code would print PLANTED; its greet, PWNED)
    assert (namespace["greet"]("x"), namespace["greet"]("")) == ("hello x", "hello nobody")
    assert stats == {"instrumented": 1, "cached_in_cache_dir": 1}
    assert not entry.is_symlink()
    status = entry.stat()
    assert (status.st_uid, stat.S_IMODE(status.st_mode) & 0o022) == (os.geteuid(), 0)
    if target is not None:
        assert target.read_bytes() == planted  # the link was replaced, not written through
    again: dict[str, int] = {}
    instrumented_code(lib.read_bytes(), str(lib), options, again)
    assert again == {"cache_hits": 1}


# -- Cache directories others can write ------------------------------------------------


def _cached_directory(tmp_path: Path) -> tuple[Path, Path, InstrumentOptions]:
    lib = tmp_path / "lib.py"
    lib.write_text(LIB)
    directory = tmp_path / "cache"
    options = InstrumentOptions(cache_dir=CacheDir(str(directory), True))
    instrumented_code(lib.read_bytes(), str(lib), options)
    return lib, directory, options


@pytest.mark.usefixtures("fresh")
@pytest.mark.parametrize(("which", "mode", "group", "reason"), [
    ("directory", 0o777, None, "everyone can write it (mode 0777)"),
    ("directory", 0o1777, None, "everyone can write it (mode 1777)"),
    pytest.param("directory", 0o775, NOBODY, f"the group nogroup (gid {NOBODY}) can write "
                 "it (mode 0775)", marks=needs_root),
    ("subdirectory", 0o777, None, "everyone can write it (mode 0777)"),
])
def test_a_cache_directory_others_can_write_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        which: str, mode: int, group: int | None, reason: str) -> None:
    """A group- or world-writable cache directory (or per-interpreter subdirectory):
    its entries are not read, nothing is written to it, one line names it and why."""
    lib, directory, options = _cached_directory(tmp_path)
    changed = directory if which == "directory" else directory / sys.implementation.cache_tag
    if group is not None:
        os.chown(changed, -1, group)
    changed.chmod(mode)
    monkeypatch.setattr(codecache, "_ready", set())  # a new process
    stamps = _stamps(directory)
    for _ in range(2):
        stats: dict[str, int] = {}
        code = instrumented_code(lib.read_bytes(), str(lib), options, stats)
        assert stats == {"instrumented": 1}
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    assert namespace["greet"]("") == "hello nobody"
    assert _stamps(directory) == stamps
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"pathprof: not using the cache directory {directory}: ")
    assert reason in lines[0]


@needs_root
@pytest.mark.usefixtures("fresh")
def test_a_cache_directory_that_is_a_symbolic_link_of_another_user_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Another user's symbolic link in the place of the cache directory, even to a
    directory of the user's own with a good entry: refused, one line."""
    lib, directory, _ = _cached_directory(tmp_path)
    link = tmp_path / "link"
    link.symlink_to(directory)
    os.lchown(link, NOBODY, NOBODY)
    monkeypatch.setattr(codecache, "_ready", set())
    options = InstrumentOptions(cache_dir=CacheDir(str(link), True))
    stats: dict[str, int] = {}
    instrumented_code(lib.read_bytes(), str(lib), options, stats)
    assert stats == {"instrumented": 1}
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"pathprof: not using the cache directory {link}: it is a "
                           f"symbolic link that belongs to uid {NOBODY}")


@pytest.mark.usefixtures("fresh")
def test_a_directory_writable_by_the_users_private_group_is_accepted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """umask 002 on a system of user private groups: a cache directory (and a project
    directory) its owner's private group can write is the owner's alone."""
    grp = pytest.importorskip("grp")
    pwd = pytest.importorskip("pwd")
    user = pwd.getpwuid(os.geteuid())
    group = grp.getgrgid(user.pw_gid)
    if group.gr_name != user.pw_name or set(group.gr_mem) - {user.pw_name}:
        pytest.skip(f"{user.pw_name}'s primary group is not a private group")
    lib, directory, options = _cached_directory(tmp_path)
    os.chown(directory, -1, user.pw_gid)
    directory.chmod(0o2775)
    monkeypatch.setattr(codecache, "_ready", set())
    stats: dict[str, int] = {}
    instrumented_code(lib.read_bytes(), str(lib), options, stats)
    assert stats == {"cache_hits": 1}
    project = tmp_path / "project"
    project.mkdir()
    project.chmod(0o775)
    (project / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 3\n")
    assert read_config(str(project)).fail_under == 3.0
    assert capsys.readouterr().err == ""


# -- The search upwards ----------------------------------------------------------------


@pytest.fixture
def said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(messages, "_said", set())
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)


def _above(tmp_path: Path, owner: int, mode: int, group: int | None = None) -> Path:
    """A directory of ``owner`` (mode ``mode``) with a configuration file of ``owner``'s,
    and a project of the user's in it without one."""
    top = tmp_path / "top"
    (top / "project" / "src").mkdir(parents=True)
    (top / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 12\n")
    os.chown(top / "pyproject.toml", owner, owner)
    os.chown(top, owner, owner if group is None else group)
    top.chmod(mode)
    return top


@pytest.mark.usefixtures("said")
@pytest.mark.parametrize(("owner", "mode", "group", "reason"), [
    pytest.param(NOBODY, 0o755, None, f"belongs to uid {NOBODY}", marks=needs_root,
                 id="owned-by-another-user"),
    pytest.param(None, 0o777, None, "everyone can write", id="world-writable"),
    pytest.param(None, 0o1777, None, "everyone can write", id="world-writable-sticky"),
    pytest.param(None, 0o775, NOBODY, "the group nogroup", marks=needs_root,
                 id="group-writable"),
])
def test_the_search_upwards_stops_at_a_directory_not_the_users_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], owner: int | None, mode: int,
        group: int | None, reason: str) -> None:
    """A directory above the project that another user owns or others can write: its
    configuration file is not read, the cache is not put beside it, one line says so."""
    top = _above(tmp_path, os.geteuid() if owner is None else owner, mode, group)
    project = top / "project"
    for start in (project, project / "src"):
        config_found = read_config(str(start))
        assert (config_found.path, config_found.fail_under) == (None, None)
    assert cache_dir(start=str(project / "src")) == CacheDir(
        str(project / "src" / ".pathprof_cache"), False)
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"pathprof: not reading {top / 'pyproject.toml'}: ")
    assert f"{top} " in line
    assert reason in line


@pytest.mark.usefixtures("said")
@pytest.mark.parametrize("mode", [0o777, 0o1777])
def test_a_starting_directory_others_can_write_is_not_looked_at(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: int) -> None:
    """The current directory is shared (as /tmp): a pyproject.toml in it is not read."""
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 12\n")
    shared.chmod(mode)
    assert read_config(str(shared)).path is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"pathprof: not reading {shared / 'pyproject.toml'}: "
                           f"everyone can write {shared} (mode {mode:04o})")


@pytest.mark.usefixtures("said")
def test_a_configuration_file_others_can_write_is_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 12\n")
    (tmp_path / "pyproject.toml").chmod(0o666)
    assert read_config(str(tmp_path)).path is None
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith(f"pathprof: not reading {tmp_path / 'pyproject.toml'}: everyone "
                           "can write it (mode 0666)")


@pytest.mark.usefixtures("said")
def test_the_search_upwards_does_not_cross_a_file_system_boundary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """The project is on a file system of its own (as a mount): the configuration file
    of the directory it is mounted in is not read, and nothing is said."""
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 12\n")
    mounted = tmp_path / "mounted"
    (mounted / "src").mkdir(parents=True)
    real_stat = os.stat
    on_the_mount = (str(mounted), str(mounted / "src"))

    def stat_(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        status = real_stat(path, *args, **kwargs)
        if str(path).startswith(on_the_mount) and not str(path).endswith(".toml"):
            fields = list(status[:10])
            fields[2] += 1  # st_dev
            return os.stat_result(fields)
        return status

    monkeypatch.setattr(config.os, "stat", stat_)
    assert read_config(str(mounted / "src")).path is None
    monkeypatch.undo()
    assert read_config(str(mounted / "src")).path == str(tmp_path / "pyproject.toml")
    assert capsys.readouterr().err == ""


@needs_root
@pytest.mark.usefixtures("said")
def test_a_checkout_another_uid_owns_keeps_its_configuration(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As in a container running as root over a bind-mounted checkout of uid 65534: the
    starting directory's owner is trusted (the user works there and runs its code), and
    so are directories of that owner above it; nothing is said."""
    checkout = tmp_path / "checkout"
    (checkout / "tests").mkdir(parents=True)
    (checkout / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 12\n")
    _chown(checkout, NOBODY)
    assert read_config(str(checkout)).fail_under == 12.0
    assert read_config(str(checkout / "tests")).fail_under == 12.0
    assert capsys.readouterr().err == ""


# -- The ordinary case, as an ordinary user ---------------------------------------------


@needs_setpriv
@pytest.mark.parametrize("place", ["cache directory", "__pycache__"])
def test_an_unprivileged_user_in_their_own_project_caches_and_hits(
        base: Path, place: str) -> None:
    """nobody runs pathprof in a project of its own (in a directory root made), under
    umask 0: no line, right counts, a cache nobody else can write (directories 0755,
    entries 0644), and a second run that hits it."""
    project = base / "project"
    _project(project / "app")
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    _chown(project, NOBODY)
    env = {"PYTHONDONTWRITEBYTECODE": ""} if place == "__pycache__" else {}
    where = project / ("app/__pycache__" if place == "__pycache__" else ".pathprof_cache")
    first = _run(project / "app", "run", "app.py", user=NOBODY, umask=0, env=env)
    assert (first.returncode, first.stdout, first.stderr) == (0, OUTPUT, "")
    assert _paths_counted(project / "app" / ".pathprof") == [1, 1]
    (entry,) = _entries(where)
    made = [where, entry.parent, entry]
    if place == "cache directory":
        made += [where / ".gitignore", where / "CACHEDIR.TAG"]
    for path in made:
        status = path.lstat()
        expected = 0o755 if stat.S_ISDIR(status.st_mode) else 0o644
        assert (status.st_uid, stat.S_IMODE(status.st_mode)) == (NOBODY, expected), path
    stamps = _stamps(where)
    again = _run(project / "app", "run", "app.py", user=NOBODY, umask=0, env=env)
    assert (again.returncode, again.stdout, again.stderr) == (0, OUTPUT, "")
    assert _stamps(where) == stamps  # read, not rewritten


@needs_root
def test_an_entry_in_pycache_that_another_user_wrote_is_never_executed(base: Path) -> None:
    """Python writes bytecode: a crafted entry of another user's in a __pycache__ others
    can write is not run; the run is right and replaces it, and the next run hits."""
    project = _project(base / "project")
    env = {"PYTHONDONTWRITEBYTECODE": ""}
    learnt = _run(project, "run", "app.py", env=env)
    assert (learnt.returncode, learnt.stdout, learnt.stderr) == (0, OUTPUT, "")
    (entry,) = _entries(project / "__pycache__")
    _craft(entry, project / "lib.py", base / "unused")
    os.chown(entry, NOBODY, NOBODY)
    (project / "__pycache__").chmod(0o777)
    done = _run(project, "run", "app.py", env=env)
    _is_right(done)
    assert done.stderr == ""
    assert entry.stat().st_uid == 0
    stamps = _stamps(project / "__pycache__")
    again = _run(project, "run", "app.py", env=env)
    assert (again.returncode, again.stdout, again.stderr) == (0, OUTPUT, "")
    assert _stamps(project / "__pycache__") == stamps
