"""pathprof.measure.codecache: where an entry of instrumented code is kept (the rule
between ``__pycache__`` and pathprof's cache directory, and each place's name), the
layout of an entry as written, and above all that an entry read back is only code
pathprof wrote: a damaged, stale, foreign, planted, linked or writable-by-others entry,
and any entry of a cache directory that is not the user's alone, counts as absent (and
is never unmarshalled, so never executed). Then pathprof's own files in the cache
directory (``read_own``/``write_own``). Each test starts with no directory checked and
no line said (the module's and :mod:`pathprof.messages`' memories, reset with
monkeypatch)."""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import stat
import sys
import types
from pathlib import Path

import pytest

from pathprof import messages
from pathprof.config import CacheDir
from pathprof.measure import codecache
from pathprof.measure.codecache import PYCACHE, Places, places, read, read_own, write, write_own

TAG = sys.implementation.cache_tag
ROOT = hasattr(os, "geteuid") and os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="needs root, to make another uid's files")
posix = pytest.mark.skipif(not hasattr(os, "geteuid"), reason="ownership and modes: POSIX")
NOBODY = 65534
SOURCE = "value = 6 * 7\n"


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """No cache directory checked or refused yet, no line said yet, bytecode written
    (the rule's default case) and no ``sys.pycache_prefix``."""
    monkeypatch.setattr(codecache, "_said", False)
    monkeypatch.setattr(codecache, "_ready", set())
    monkeypatch.setattr(codecache, "_refused", set())
    monkeypatch.setattr(messages, "_said", set())
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "project" / "mod.py"
    path.parent.mkdir()
    path.write_text(SOURCE)
    path.chmod(0o644)
    return path


def _digest(path: Path) -> bytes:
    return hashlib.sha256(path.read_bytes()).digest()


def _code(path: Path) -> types.CodeType:
    return compile(path.read_text(), str(path), "exec")


def _own_name(directory: Path, source: Path, suffix: str = "") -> str:
    """The entry's name in the cache directory, from the module docstring's rule."""
    key = hashlib.sha256(str(source).encode()).hexdigest()[:16]
    return str(directory / TAG / f"mod.{key}{suffix}.pathprof-T1.pyc")


def _cached(tmp_path: Path, source: Path) -> tuple[Places, str]:
    """A good entry for ``source`` in a cache directory of the user's; its path."""
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), True))
    assert write(where, _digest(source), str(source), _code(source)) == str(tmp_path / "cache")
    return where, where.write[0]


def _runs(code: object) -> object:
    namespace: dict[str, object] = {}
    exec(code, namespace)  # type: ignore[arg-type]
    return namespace["value"]


# -- where an entry is kept ------------------------------------------------------------

def test_a_configured_cache_directory_is_read_first_and_alone_written(
        tmp_path: Path, source: Path) -> None:
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), True))
    own = _own_name(tmp_path / "cache", source)
    pycache = str(source.parent / "__pycache__" / f"mod.{TAG}.pathprof-T1.pyc")
    assert (where.read, where.write, where.directory) == ([own, pycache], [own],
                                                          str(tmp_path / "cache"))


def test_where_python_writes_bytecode_pycache_comes_first(tmp_path: Path, source: Path
                                                          ) -> None:
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    own = _own_name(tmp_path / "cache", source)
    pycache = str(source.parent / "__pycache__" / f"mod.{TAG}.pathprof-T1.pyc")
    assert (where.read, where.write) == ([pycache, own], [pycache, own])


def test_where_python_writes_no_bytecode_the_cache_directory_takes_it(
        tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    own = _own_name(tmp_path / "cache", source)
    assert where.write == [own]
    assert where.read[0] == own


def test_in_place_entries_and_optimized_code_have_names_of_their_own(
        tmp_path: Path, source: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), True), in_place=True)
    assert where.write == [_own_name(tmp_path / "cache", source)[:-len(".pyc")]
                           + "-inplace.pyc"]
    monkeypatch.setattr(sys, "flags", types.SimpleNamespace(optimize=2))  # -OO
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), True))
    assert where.write == [_own_name(tmp_path / "cache", source, ".opt-2")]


def test_two_sources_of_one_name_in_two_directories_have_two_entries(tmp_path: Path
                                                                     ) -> None:
    cache = CacheDir(str(tmp_path / "cache"), True)
    first = places(str(tmp_path / "a" / "mod.py"), "T1", cache).write[0]
    second = places(str(tmp_path / "b" / "mod.py"), "T1", cache).write[0]
    assert first != second
    assert os.path.dirname(first) == os.path.dirname(second) == str(tmp_path / "cache" / TAG)


def test_a_pycache_prefix_moves_the_pycache_entry(tmp_path: Path, source: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    assert where.write[0] == f"{prefix}{source.parent}{os.sep}mod.{TAG}.pathprof-T1.pyc"


# -- writing and reading back ----------------------------------------------------------

def test_an_entry_written_is_read_back_as_the_same_code(tmp_path: Path, source: Path
                                                        ) -> None:
    where, _entry = _cached(tmp_path, source)
    code = read(where, _digest(source), str(source))
    assert code == _code(source)
    assert _runs(code) == 42


def test_an_entry_is_laid_out_as_the_module_docstring_says(tmp_path: Path, source: Path
                                                           ) -> None:
    _where, entry = _cached(tmp_path, source)
    data = Path(entry).read_bytes()
    name = str(source).encode()
    magic = importlib.util.MAGIC_NUMBER
    header = (b"PPRF\x00\x02" + magic + _digest(source) + len(name).to_bytes(4, "little")
              + name)
    assert data.startswith(header)
    body = data[len(header) + 32:]
    assert data[len(header):len(header) + 32] == hashlib.sha256(body).digest()
    assert marshal.loads(body) == _code(source)


def test_an_entry_written_to_pycache_says_so(tmp_path: Path, source: Path) -> None:
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    assert write(where, _digest(source), str(source), _code(source)) == PYCACHE
    assert os.path.isfile(where.write[0])
    assert not (tmp_path / "cache").exists()
    assert _runs(read(where, _digest(source), str(source))) == 42


def test_where_pycache_cannot_be_written_the_cache_directory_takes_the_entry(
        tmp_path: Path, source: Path) -> None:
    (source.parent / "__pycache__").write_text("a file where the directory would be")
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    assert write(where, _digest(source), str(source), _code(source)) == str(tmp_path / "cache")
    assert os.path.isfile(where.write[1])
    assert _runs(read(where, _digest(source), str(source))) == 42


@posix
def test_a_cache_directory_pathprof_makes_is_tagged_and_nobody_elses(
        tmp_path: Path, source: Path) -> None:
    cache = tmp_path / "deep" / "cache"
    where = places(str(source), "T1", CacheDir(str(cache), True))
    mask = os.umask(0)  # what pathprof makes must not depend on it
    try:
        assert write(where, _digest(source), str(source), _code(source)) == str(cache)
    finally:
        os.umask(mask)
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (cache / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55\n")
    for directory in (tmp_path / "deep", cache, cache / TAG):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o755, directory
    assert stat.S_IMODE(Path(where.write[0]).stat().st_mode) == 0o644
    assert sorted(p.name for p in cache.iterdir()) == [".gitignore", "CACHEDIR.TAG", TAG]
    assert os.listdir(cache / TAG) == [os.path.basename(where.write[0])]  # no temporary


@posix
@pytest.mark.parametrize(("source_mode", "entry_mode"),
                         [(0o644, 0o644), (0o600, 0o600), (0o640, 0o640), (0o666, 0o644),
                          (0o400, 0o600), (0o777, 0o644)])
def test_an_entry_gets_its_sources_read_bits_and_the_owners_write(
        tmp_path: Path, source: Path, source_mode: int, entry_mode: int) -> None:
    source.chmod(source_mode)
    mask = os.umask(0)
    try:
        _where, entry = _cached(tmp_path, source)
    finally:
        os.umask(mask)
    assert stat.S_IMODE(os.stat(entry).st_mode) == entry_mode


@posix
def test_an_entry_of_a_source_that_is_gone_is_the_owners_alone(tmp_path: Path) -> None:
    gone = tmp_path / "gone.py"
    where = places(str(gone), "T1", CacheDir(str(tmp_path / "cache"), True))
    assert write(where, b"\x00" * 32, str(gone), compile("value = 1", "g", "exec")) is not None
    assert stat.S_IMODE(os.stat(where.write[0]).st_mode) == 0o600


def test_a_planted_symbolic_link_is_replaced_never_written_through(
        tmp_path: Path, source: Path) -> None:
    where = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), True))
    os.makedirs(os.path.dirname(where.write[0]))
    victim = tmp_path / "victim"
    victim.write_text("the user's file")
    os.symlink(victim, where.write[0])
    assert write(where, _digest(source), str(source), _code(source)) == str(tmp_path / "cache")
    assert victim.read_text() == "the user's file"
    assert not os.path.islink(where.write[0])
    assert _runs(read(where, _digest(source), str(source))) == 42


def test_an_entry_that_can_be_written_nowhere_is_said_once(
        tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache directory's parent would be")
    where = places(str(source), "T1", CacheDir(str(blocker / "cache"), True))
    assert write(where, _digest(source), str(source), _code(source)) is None
    assert write(where, _digest(source), str(source), _code(source)) is None
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith(f"pathprof: no cache of instrumented code can be written "
                               f"({blocker / 'cache'}: ")
    assert "PATHPROF_CACHE_DIR" in lines[0]


# -- what is never used ----------------------------------------------------------------

def _other_magic(data: bytes, hash_at: int) -> bytes:
    magic = importlib.util.MAGIC_NUMBER
    other = bytes([magic[0] ^ 1]) + magic[1:]
    return data.replace(b"PPRF\x00\x02" + magic, b"PPRF\x00\x02" + other, 1)


def _flipped(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


#: each takes a good entry's bytes and where the body's hash starts in them
CORRUPTIONS = {
    "empty": lambda data, hash_at: b"",
    "header only": lambda data, hash_at: data[:hash_at],
    "header and hash only": lambda data, hash_at: data[:hash_at + 32],
    "truncated body": lambda data, hash_at: data[:-1],
    "a body byte flipped": lambda data, hash_at: _flipped(data, len(data) - 1),
    "a body byte added": lambda data, hash_at: data + b"\x00",
    "a hash byte flipped": lambda data, hash_at: _flipped(data, hash_at + 5),
    "a path byte flipped": lambda data, hash_at: _flipped(data, hash_at - 1),
    "the format before": lambda data, hash_at: b"PPRF\x00\x01" + data[6:],
    "another interpreter": _other_magic,
}


@pytest.mark.parametrize("corrupt", sorted(CORRUPTIONS))
def test_a_damaged_entry_counts_as_absent(tmp_path: Path, source: Path, corrupt: str) -> None:
    where, entry = _cached(tmp_path, source)
    data = Path(entry).read_bytes()
    name = str(source).encode()
    hash_at = data.index(name) + len(name)
    damaged = CORRUPTIONS[corrupt](data, hash_at)
    assert damaged != data
    Path(entry).write_bytes(damaged)
    assert read(where, _digest(source), str(source)) is None


def test_an_entry_of_another_source_or_another_path_counts_as_absent(
        tmp_path: Path, source: Path) -> None:
    where, entry = _cached(tmp_path, source)
    changed = hashlib.sha256(b"value = 0\n").digest()
    assert read(where, changed, str(source)) is None  # the source changed since
    moved = str(tmp_path / "project" / "other.py")
    assert read(Places([entry], [], where.directory), _digest(source), moved) is None
    assert _runs(read(where, _digest(source), str(source))) == 42  # and it is still good


def test_a_foreign_body_with_a_matching_hash_is_refused_not_run(tmp_path: Path,
                                                                source: Path) -> None:
    """What anyone who can read the source can compute: the header of a good entry, a
    body that is no marshalled code, and its hash."""
    where, entry = _cached(tmp_path, source)
    name = str(source).encode()
    header = (b"PPRF\x00\x02" + importlib.util.MAGIC_NUMBER + _digest(source)
              + len(name).to_bytes(4, "little") + name)
    for body in (b"\xff\xfe garbage", b"\xe3"):  # an unknown type code; a code cut short
        Path(entry).write_bytes(header + hashlib.sha256(body).digest() + body)
        assert read(where, _digest(source), str(source)) is None


@posix
@pytest.mark.parametrize("mode", [0o664, 0o646, 0o666, 0o622])
def test_an_entry_others_can_write_counts_as_absent(tmp_path: Path, source: Path,
                                                    mode: int) -> None:
    where, entry = _cached(tmp_path, source)
    os.chmod(entry, mode)
    assert read(where, _digest(source), str(source)) is None


def test_a_symbolic_link_to_a_good_entry_counts_as_absent(tmp_path: Path, source: Path
                                                          ) -> None:
    where, entry = _cached(tmp_path, source)
    elsewhere = tmp_path / "elsewhere.pyc"
    os.rename(entry, elsewhere)
    os.symlink(elsewhere, entry)
    assert read(where, _digest(source), str(source)) is None


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_or_a_directory_planted_as_the_entry_counts_as_absent_at_once(
        tmp_path: Path, source: Path) -> None:
    where, entry = _cached(tmp_path, source)
    os.unlink(entry)
    os.mkfifo(entry, 0o644)  # opened without blocking: nothing hangs
    assert read(where, _digest(source), str(source)) is None
    os.unlink(entry)
    os.mkdir(entry)
    assert read(where, _digest(source), str(source)) is None


@needs_root
def test_an_entry_of_another_user_counts_as_absent(tmp_path: Path, source: Path) -> None:
    where, entry = _cached(tmp_path, source)
    os.chown(entry, NOBODY, NOBODY)
    assert read(where, _digest(source), str(source)) is None


def test_a_bad_entry_in_the_first_place_leaves_the_second_to_be_read(
        tmp_path: Path, source: Path) -> None:
    good = places(str(source), "T1", CacheDir(str(tmp_path / "cache"), False))
    assert write(good, _digest(source), str(source), _code(source)) == PYCACHE
    pycache = good.write[0]
    both = Places([str(tmp_path / "first.pyc"), pycache], [], good.directory)
    Path(both.read[0]).write_bytes(b"PPRF\x00\x02 nothing good")
    assert _runs(read(both, _digest(source), str(source))) == 42


# -- the cache directory's own checks --------------------------------------------------

@posix
def test_a_cache_directory_anyone_can_write_is_not_read_and_is_said_once(
        tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where, _entry = _cached(tmp_path, source)
    codecache._ready.clear()  # a later process, which checks the directory anew
    (tmp_path / "cache").chmod(0o777)
    assert read(where, _digest(source), str(source)) is None
    assert read(where, _digest(source), str(source)) is None
    lines = capsys.readouterr().err.splitlines()
    assert lines == [f"pathprof: not using the cache directory {tmp_path / 'cache'}: everyone "
                     "can write it (mode 0777), so the code in it may not be pathprof's; every "
                     "run instruments from scratch: remove it (or make it yours alone: chmod "
                     "go-w), or set PATHPROF_CACHE_DIR or cache_dir in [tool.pathprof] to a "
                     "directory of your own"]


@posix
def test_a_per_interpreter_subdirectory_anyone_can_write_is_refused(
        tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    where, _entry = _cached(tmp_path, source)
    codecache._ready.clear()
    (tmp_path / "cache" / TAG).chmod(0o777)
    assert read(where, _digest(source), str(source)) is None
    err = capsys.readouterr().err
    assert f"{tmp_path / 'cache'}: {TAG} in it: everyone can write it (mode 0777)" in err


@posix
def test_a_refused_cache_directory_is_not_written_to(tmp_path: Path, source: Path,
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    (cache / TAG).mkdir()
    where = places(str(source), "T1", CacheDir(str(cache), True))
    assert read(where, _digest(source), str(source)) is None  # refused here
    assert write(where, _digest(source), str(source), _code(source)) is None
    assert os.listdir(cache / TAG) == []
    assert stat.S_IMODE(cache.stat().st_mode) == 0o777  # left as it is
    assert "not using the cache directory" in capsys.readouterr().err


@posix
def test_a_cache_directory_anyone_can_write_gets_nothing_even_on_a_first_write(
        tmp_path: Path, source: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)
    where = places(str(source), "T1", CacheDir(str(cache), True))
    assert write(where, _digest(source), str(source), _code(source)) is None
    assert os.listdir(cache) == []


@needs_root
def test_a_cache_directory_of_another_user_is_refused(tmp_path: Path, source: Path,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    where, _entry = _cached(tmp_path, source)
    codecache._ready.clear()
    os.chown(tmp_path / "cache", NOBODY, NOBODY)
    assert read(where, _digest(source), str(source)) is None
    assert f"{tmp_path / 'cache'}: it belongs to uid {NOBODY}" in capsys.readouterr().err


def test_a_cache_directory_that_is_the_users_link_to_the_users_directory_is_used(
        tmp_path: Path, source: Path) -> None:
    _where, _entry = _cached(tmp_path, source)
    codecache._ready.clear()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "cache")
    where = places(str(source), "T1", CacheDir(str(link), True))
    assert _runs(read(where, _digest(source), str(source))) == 42


@needs_root
def test_a_cache_directory_that_is_another_users_link_is_refused(
        tmp_path: Path, source: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _cached(tmp_path, source)
    codecache._ready.clear()
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "cache")
    os.lchown(link, NOBODY, NOBODY)
    where = places(str(source), "T1", CacheDir(str(link), True))
    assert read(where, _digest(source), str(source)) is None
    assert (f"{link}: it is a symbolic link that belongs to uid {NOBODY}"
            in capsys.readouterr().err)


# -- pathprof's own files --------------------------------------------------------------

@posix
def test_an_own_file_is_written_private_and_read_back(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    assert write_own(str(cache), "analyses/one.json", b'{"a": 1}')
    assert stat.S_IMODE((cache / "analyses" / "one.json").stat().st_mode) == 0o600
    assert (cache / "CACHEDIR.TAG").is_file()
    assert read_own(str(cache), "analyses/one.json", 8) == b'{"a": 1}'  # 8 bytes: the most
    assert read_own(str(cache), "analyses/one.json", 7) is None  # larger than allowed
    assert read_own(str(cache), "analyses/absent.json", 100) is None


def test_an_own_file_outside_the_cache_directory_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    outside = tmp_path / "outside.json"
    assert not write_own(str(cache), str(outside), b"data")  # an absolute name
    assert not outside.exists()
    outside.write_bytes(b"data")
    assert read_own(str(cache), str(outside), 100) is None


def test_an_own_file_that_climbs_out_of_the_cache_directory_is_refused(tmp_path: Path
                                                                        ) -> None:
    cache = tmp_path / "cache"
    assert write_own(str(cache), "x.json", b"inside")
    assert not write_own(str(cache), "../escaped.json", b"data")
    assert not (tmp_path / "escaped.json").exists()
    (tmp_path / "escaped.json").write_bytes(b"outside")
    assert read_own(str(cache), "../escaped.json", 100) is None


@posix
def test_an_own_file_others_can_write_or_in_a_refused_directory_is_not_read(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    assert write_own(str(cache), "one.json", b"data")
    os.chmod(cache / "one.json", 0o666)
    assert read_own(str(cache), "one.json", 100) is None
    os.chmod(cache / "one.json", 0o600)
    codecache._ready.clear()
    cache.chmod(0o777)
    assert read_own(str(cache), "one.json", 100) is None
    assert not write_own(str(cache), "two.json", b"data")
    assert not (cache / "two.json").exists()
    assert "not using the cache directory" in capsys.readouterr().err
