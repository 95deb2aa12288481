"""The import hook's selection, its fallbacks, and its cache."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import sysconfig
import types
from pathlib import Path
from typing import Any

import pytest

import pathprof
from pathprof.config import CACHE_DIR_VARIABLE, CacheDir
from pathprof.measure import codecache, importhook
from pathprof.measure.importhook import ImportHook, InstrumentOptions, instrumented_code
from pathprof.python.selection import Selection
from pathprof.runtime import holder


def test_default_selection_is_the_project_not_the_stdlib_or_site_packages(tmp_path: Path
                                                                          ) -> None:
    selection = Selection(default_dirs=[str(tmp_path)])
    assert selection.wants("app", str(tmp_path / "app.py"))
    assert selection.wants("pkg.mod", str(tmp_path / "pkg" / "mod.py"))
    assert not selection.wants("app", str(tmp_path / "app.pyc"))
    assert not selection.wants("other", "/elsewhere/other.py")
    stdlib = sysconfig.get_paths()["stdlib"]
    purelib = sysconfig.get_paths()["purelib"]
    assert not Selection(default_dirs=[stdlib]).wants("json", os.path.join(stdlib, "json.py"))
    assert not Selection(default_dirs=["/"]).wants("x", os.path.join(purelib, "x", "y.py"))
    assert not Selection(default_dirs=["/"]).wants("pathprof.runtime", importhook.__file__)


def test_source_include_and_omit(tmp_path: Path) -> None:
    stdlib = sysconfig.get_paths()["stdlib"]
    named = Selection(source=["json"])
    assert named.wants("json.decoder", os.path.join(stdlib, "json", "decoder.py"))
    assert not named.wants("jsonx", os.path.join(stdlib, "jsonx.py"))
    assert not named.wants("app", str(tmp_path / "app.py"))
    by_dir = Selection(source=[str(tmp_path / "pkg")])
    assert by_dir.wants("pkg.a", str(tmp_path / "pkg" / "a.py"))
    assert not by_dir.wants("b", str(tmp_path / "b.py"))
    omit = Selection(default_dirs=[str(tmp_path)], omit=["*/tests/*", "conf.py"])
    assert not omit.wants("tests.t", str(tmp_path / "tests" / "t.py"))
    assert not omit.wants("conf", str(tmp_path / "conf.py"))
    assert omit.wants("app", str(tmp_path / "app.py"))
    include = Selection(default_dirs=[str(tmp_path)], include=["*/app*.py"])
    assert include.wants("app2", str(tmp_path / "app2.py"))
    assert not include.wants("lib", str(tmp_path / "lib.py"))


@pytest.fixture
def no_cache_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cache's places as a user without PATHPROF_CACHE_DIR has them (the suite
    sets one per session), and the line that no cache can be written not yet said."""
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)
    monkeypatch.setattr(codecache, "_said", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)


def _options(directory: Path, configured: bool = False, **kwargs: Any) -> InstrumentOptions:
    return InstrumentOptions(cache_dir=CacheDir(str(directory), configured), **kwargs)


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.rglob("*.pathprof-*.pyc"))


def _unbound(code: types.CodeType) -> types.CodeType:
    """``code`` with the holder it is bound to put back as the placeholder."""
    consts = tuple(_unbound(c) if isinstance(c, types.CodeType)
                   else holder.PLACEHOLDER if isinstance(c, types.ModuleType) else c
                   for c in code.co_consts)
    return code.replace(co_consts=consts)


@pytest.mark.usefixtures("no_cache_variable")
def test_cache_is_keyed_on_source_and_options(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    stats: dict[str, int] = {}
    options = _options(tmp_path / "own")
    first = instrumented_code(path.read_bytes(), str(path), options, stats)
    again = instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"instrumented": 1, "cache_hits": 1, "cached_in_pycache": 1}
    # the same code, each bound to a holder of its own (pathprof.runtime.holder)
    assert holder.names_of(again) is not holder.names_of(first)
    assert _unbound(again) == _unbound(first)
    instrumented_code(path.read_bytes(), str(path), _options(tmp_path / "own", mode="edge"),
                      stats)
    assert stats["instrumented"] == 2
    path.write_text("def f(x):\n    return 3\n")
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats["instrumented"] == 3
    # A corrupt cache file is ignored and rewritten, never trusted.
    (cached,) = (tmp_path / "__pycache__").glob(f"m.*.pathprof-{options.tag()}.pyc")
    cached.write_bytes(cached.read_bytes()[:40])
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats["instrumented"] == 4
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats["instrumented"] == 4  # rewritten whole: read again
    assert not (tmp_path / "own").exists()  # Python writes bytecode: __pycache__ only


@pytest.mark.usefixtures("no_cache_variable")
def test_where_python_writes_no_bytecode_the_cache_is_pathprofs_own_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """-B / PYTHONDONTWRITEBYTECODE: nothing in __pycache__; the cache directory holds
    the entry, a .gitignore and a CACHEDIR.TAG, and the second call is a hit."""
    path = tmp_path / "src" / "m.py"
    path.parent.mkdir()
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    own = tmp_path / "project" / ".pathprof_cache"
    options = _options(own)
    stats: dict[str, int] = {}
    for _ in range(2):
        code = instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"instrumented": 1, "cached_in_cache_dir": 1, "cache_hits": 1}
    assert code.co_filename == str(path)
    assert not list((tmp_path / "src").rglob("*.pyc"))
    assert (own / ".gitignore").read_text().splitlines()[-1] == "*"
    assert (own / "CACHEDIR.TAG").read_text().startswith(
        "Signature: 8a477f597d28d172789f06886806bc55\n")
    (entry,) = _entries(own)
    assert entry.parent == own / sys.implementation.cache_tag
    assert entry.name.startswith("m.")
    assert f".pathprof-{options.tag()}." in entry.name
    # pathprof instrument warms the same place; a run then reads it.
    other = tmp_path / "src" / "n.py"
    other.write_text("def g():\n    return 2\n")
    warmed = importhook.warm_cache([str(path), str(other)], options)
    assert (warmed.cached, warmed.instrumented, warmed.in_cache_dir) == (1, 1, 1)
    assert len(_entries(own)) == 2
    assert not list((tmp_path / "src").rglob("*.pyc"))


@pytest.mark.usefixtures("no_cache_variable")
def test_a_configured_cache_directory_is_used_even_where_python_writes_bytecode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    stats: dict[str, int] = {}
    options = _options(tmp_path / "configured", configured=True)
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"instrumented": 1, "cached_in_cache_dir": 1}
    assert len(_entries(tmp_path / "configured")) == 1
    assert not (tmp_path / "__pycache__").exists()
    # An entry in __pycache__ (written by a run without the directory) is read too.
    unconfigured = _options(tmp_path / "other")
    instrumented_code(path.read_bytes(), str(path), unconfigured, stats)
    (tmp_path / "configured").rename(tmp_path / "gone")
    stats.clear()
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"cache_hits": 1}


@pytest.mark.usefixtures("no_cache_variable")
def test_a_tree_where_pycache_cannot_be_written_is_cached_in_the_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    (tmp_path / "__pycache__").write_text("a file where the directory would go")
    stats: dict[str, int] = {}
    for _ in range(2):
        instrumented_code(path.read_bytes(), str(path), _options(tmp_path / "own"), stats)
    assert stats == {"instrumented": 1, "cached_in_cache_dir": 1, "cache_hits": 1}
    assert capsys.readouterr().err == ""


@pytest.mark.usefixtures("no_cache_variable")
def test_two_files_of_one_name_never_share_an_entry(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    options = _options(tmp_path / "own")
    paths = []
    for package, value in (("a", 1), ("b", 2)):
        (tmp_path / package).mkdir()
        paths.append(tmp_path / package / "util.py")
        paths[-1].write_text(f"def f():\n    return {value}\n")
    stats: dict[str, int] = {}
    for _ in range(2):
        codes = [instrumented_code(p.read_bytes(), str(p), options, stats) for p in paths]
    assert stats == {"instrumented": 2, "cached_in_cache_dir": 2, "cache_hits": 2}
    assert len({e.name for e in _entries(tmp_path / "own")}) == 2
    assert [code.co_filename for code in codes] == [str(p) for p in paths]
    returned = []
    for code in codes:
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        returned.append(namespace["f"]())
    assert returned == [1, 2]
    # The same text at two paths: two entries still (the path is part of the key).
    paths[1].write_text(paths[0].read_text())
    stats.clear()
    instrumented_code(paths[1].read_bytes(), str(paths[1]), options, stats)
    assert stats == {"instrumented": 1, "cached_in_cache_dir": 1}


@pytest.mark.usefixtures("no_cache_variable")
def test_a_corrupt_entry_in_the_directory_is_ignored_and_rewritten(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    options = _options(tmp_path / "own")
    instrumented_code(path.read_bytes(), str(path), options)
    (entry,) = _entries(tmp_path / "own")
    for damage in (entry.read_bytes()[:60], entry.read_bytes()[:-7], b"",
                   entry.read_bytes().replace(b"PPRF", b"PPRG", 1)):
        entry.write_bytes(damage)
        stats: dict[str, int] = {}
        code = instrumented_code(path.read_bytes(), str(path), options, stats)
        assert stats == {"instrumented": 1, "cached_in_cache_dir": 1}
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        assert namespace["f"](0) == 2
        instrumented_code(path.read_bytes(), str(path), options, stats)
        assert stats["cache_hits"] == 1


@pytest.mark.usefixtures("no_cache_variable")
def test_no_writable_cache_is_said_once_and_the_code_still_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    (tmp_path / "a_file").write_text("not a directory")
    options = _options(tmp_path / "a_file" / "cache", configured=True)
    stats: dict[str, int] = {}
    for name in ("m", "n", "m"):
        path = tmp_path / f"{name}.py"
        path.write_text("def f(x):\n    return 1 if x else 2\n")
        code = instrumented_code(path.read_bytes(), str(path), options, stats)
        namespace: dict[str, Any] = {}
        exec(code, namespace)
        assert namespace["f"](1) == 1
    assert stats == {"instrumented": 3}
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("pathprof: no cache of instrumented code can be written (")
    assert str(tmp_path / "a_file" / "cache") in lines[0]
    assert "PATHPROF_CACHE_DIR" in lines[0]
    # --no-cache: nothing tried, nothing said.
    monkeypatch.setattr(codecache, "_said", False)
    instrumented_code(path.read_bytes(), str(path),
                      _options(tmp_path / "a_file" / "cache", True, cache=False))
    assert capsys.readouterr().err == ""


@pytest.mark.usefixtures("no_cache_variable")
def test_the_pycache_prefix_is_followed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """sys.pycache_prefix: the __pycache__ entry goes there, mirroring the source's
    directory, not beside the source."""
    other = tmp_path / "n.py"
    other.write_text("def g():\n    return 2\n")
    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    instrumented_code(other.read_bytes(), str(other), _options(tmp_path / "own"))
    assert [p.name.split(".")[0] for p in prefix.rglob("*.pathprof-*.pyc")] == ["n"]
    assert not list((tmp_path / "__pycache__").glob("n.*"))
    assert not (tmp_path / "own").exists()


@pytest.mark.usefixtures("no_cache_variable")
def test_instrument_warms_what_the_import_hook_reads(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """warm_cache, then imports through the hook: every selected module is a hit."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.chdir(tmp_path)
    package = tmp_path / "warmpkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import one, two\n")
    (package / "one.py").write_text("def f(x):\n    return 1 if x else 2\n")
    (package / "two.py").write_text("def g(x):\n    return [i for i in range(x) if i]\n")
    paths = sorted(str(p) for p in package.glob("*.py"))
    options = InstrumentOptions()
    assert options.cache_dir == CacheDir(str(tmp_path / ".pathprof_cache"), False)
    assert importhook.warm_cache(paths, options).in_cache_dir == 3
    monkeypatch.syspath_prepend(str(tmp_path))
    hook = ImportHook(Selection(default_dirs=[str(tmp_path)]), InstrumentOptions())
    hook.install()
    try:
        import warmpkg  # type: ignore[import-not-found]

        assert warmpkg.one.f(0) == 2
        assert warmpkg.two.g(3) == [1, 2]
        assert hook.stats == {"cache_hits": 3}
    finally:
        hook.uninstall()
        for name in ("warmpkg", "warmpkg.one", "warmpkg.two"):
            sys.modules.pop(name, None)


def _run_pathprof(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
    environment.update({"PYTHONDONTWRITEBYTECODE": "1", **env})
    return subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=cwd,
                          env=environment, capture_output=True, text=True, timeout=120)


def _stamps(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_ino, p.stat().st_mtime_ns) for p in _entries(directory)}


def test_runs_under_pythondontwritebytecode_share_the_cache_directory(tmp_path: Path
                                                                       ) -> None:
    """The second run reads every entry the first wrote (none is written again), and
    the source tree gets no bytecode."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "lib.py").write_text(
        "def f(x):\n    if x:\n        return x + 1\n    return 0\n")
    (tmp_path / "app" / "main.py").write_text("from lib import f\n\nprint(f(1), f(0))\n")
    own = tmp_path / ".pathprof_cache"  # beside pyproject.toml, not in the current directory
    first = _run_pathprof(tmp_path / "app", "run", "main.py")
    assert (first.returncode, first.stdout, first.stderr) == (0, "2 0\n", "")
    written = _stamps(own)
    assert len(written) == 1  # lib (the main script is compiled, as Python does)
    again = _run_pathprof(tmp_path / "app", "run", "main.py")
    assert (again.returncode, again.stdout, again.stderr) == (0, "2 0\n", "")
    assert _stamps(own) == written  # read, not rewritten
    assert not list((tmp_path / "app").rglob("*.pyc"))
    assert (own / ".gitignore").is_file()
    lib = pathprof.load(str(tmp_path / "app" / ".pathprof")).functions
    assert sorted(p.count for f in lib if f.qualname == "f" for p in f.paths) == [1, 1]


def test_cache_dir_from_pyproject_and_from_the_variable(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\ncache_dir = 'build/pp'\n")
    (tmp_path / "lib.py").write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "app.py").write_text("from lib import f\n\nprint(f(1))\n")
    done = _run_pathprof(tmp_path, "run", "app.py", PYTHONDONTWRITEBYTECODE="")
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr
    assert len(_entries(tmp_path / "build" / "pp")) == 1  # configured: used always
    assert not list(tmp_path.glob("__pycache__/*.pathprof-*"))
    by_variable = tmp_path / "elsewhere"
    done = _run_pathprof(tmp_path, "run", "app.py", PATHPROF_CACHE_DIR=str(by_variable))
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr
    assert len(_entries(by_variable)) == 1  # the variable wins over cache_dir
    by_flag = tmp_path / "flag"
    done = _run_pathprof(tmp_path, "run", "--cache-dir", str(by_flag), "app.py",
                         PATHPROF_CACHE_DIR=str(by_variable))
    assert (done.returncode, done.stdout) == (0, "2\n"), done.stderr
    assert len(_entries(by_flag)) == 1  # and the flag over the variable


def test_an_unwritable_cache_is_one_line_and_the_run_is_right(tmp_path: Path) -> None:
    (tmp_path / "lib.py").write_text("def f(x):\n    if x:\n        return x + 1\n    return 0\n")
    (tmp_path / "other.py").write_text("def g():\n    return 5\n")
    (tmp_path / "app.py").write_text(
        "from lib import f\nfrom other import g\n\nprint(f(1), f(0), g())\n")
    (tmp_path / "a_file").write_text("")
    cache = str(tmp_path / "a_file" / "cache")
    for _ in range(2):
        done = _run_pathprof(tmp_path, "run", "app.py", PATHPROF_CACHE_DIR=cache)
        assert (done.returncode, done.stdout) == (0, "2 0 5\n")
        lines = done.stderr.splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0].startswith("pathprof: no cache of instrumented code can be written")
    functions = {f.qualname: f for f in pathprof.load(str(tmp_path / ".pathprof")).functions}
    assert sorted(p.count for p in functions["f"].paths) == [1, 1]
    assert functions["g"].total == 1
    quiet = _run_pathprof(tmp_path, "run", "--no-cache", "app.py", PATHPROF_CACHE_DIR=cache)
    assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "2 0 5\n", "")


def test_pathprof_instrument_then_run_hits_the_cache_for_every_file(tmp_path: Path) -> None:
    package = tmp_path / "shop"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "prices.py").write_text("def price(n):\n    return n * 2 if n > 1 else n\n")
    (package / "orders.py").write_text(
        "from shop.prices import price\n\n\ndef total(items):\n"
        "    return sum(price(i) for i in items)\n")
    (tmp_path / "main.py").write_text("from shop.orders import total\n\nprint(total([1, 2]))\n")
    warmed = _run_pathprof(tmp_path, "instrument", "--source", "shop")
    assert warmed.returncode == 0, warmed.stderr
    assert warmed.stdout == ("3 files: 3 instrumented, 0 already cached, 0 could not be; "
                             "cached in .pathprof_cache\n")
    entries = _stamps(tmp_path / ".pathprof_cache")
    assert len(entries) == 3
    done = _run_pathprof(tmp_path, "run", "--source", "shop", "main.py")
    assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", "")
    assert _stamps(tmp_path / ".pathprof_cache") == entries  # every file read, none written
    assert not list(package.rglob("*.pyc"))
    again = _run_pathprof(tmp_path, "instrument", "--source", "shop")
    assert again.stdout == "3 files: 0 instrumented, 3 already cached, 0 could not be\n"


def test_pathprof_failure_warns_and_runs_unmeasured(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "victim_mod.py").write_text("def f():\n    return 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated pathprof bug")

    monkeypatch.setattr(importhook, "_compile_instrumented", broken)
    hook = ImportHook(Selection(default_dirs=[str(tmp_path)]), InstrumentOptions(cache=False))
    hook.install()
    try:
        import victim_mod  # type: ignore[import-not-found]
        assert victim_mod.f() == 42
        err = capsys.readouterr().err
        assert err.startswith("pathprof: could not instrument ")
        assert err.count("\n") == 1
        assert "(RuntimeError: simulated pathprof bug); it runs unmeasured" in err
        assert holder.names_of(victim_mod.f.__code__) is None
    finally:
        hook.uninstall()
        sys.modules.pop("victim_mod", None)


def test_already_imported_modules_are_found(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "early_mod.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import early_mod  # type: ignore[import-not-found]

    try:
        hook = ImportHook(Selection(default_dirs=[str(tmp_path)]), InstrumentOptions())
        assert hook.already_imported() == [("early_mod", early_mod)]
    finally:
        sys.modules.pop("early_mod", None)


def test_pathprof_instrument_warms_what_pytest_pathprof_reads(tmp_path: Path) -> None:
    """pytest --pathprof stops counting at the basis by default: instrument with
    --stop-counting basis, and the session writes no entry (all read)."""
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\nsource = ['calc']\n")
    (tmp_path / "calc").mkdir()
    (tmp_path / "calc" / "__init__.py").write_text("")
    (tmp_path / "calc" / "ops.py").write_text(
        "def sign(x):\n    if x < 0:\n        return -1\n    return 1\n")
    (tmp_path / "test_ops.py").write_text(
        "from calc.ops import sign\n\n\ndef test_sign():\n    assert sign(-2) == -1\n")
    warmed = _run_pathprof(tmp_path, "instrument", "--stop-counting", "basis")
    assert warmed.stdout.startswith("2 files: 2 instrumented"), warmed.stderr
    entries = _stamps(tmp_path / ".pathprof_cache")
    assert len(entries) == 2
    environment = {k: v for k, v in os.environ.items()
                   if not k.startswith(("PATHPROF_", "PYTEST_"))}
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           "test_ops.py", "--pathprof"], cwd=tmp_path, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _stamps(tmp_path / ".pathprof_cache") == entries
    (sign,) = pathprof.load(str(tmp_path / ".pathprof")).functions
    assert [p.count for p in sign.paths] == [1]


def test_code_compiled_under_python_o_is_cached_apart(tmp_path: Path) -> None:
    """-O drops asserts from the compiled code: its entry is not the one a run without
    it reads (as Python names a .pyc opt-1)."""
    (tmp_path / "lib.py").write_text("def f(x):\n    assert x > 0\n    return x\n")
    (tmp_path / "app.py").write_text(
        "from lib import f\n\ntry:\n    f(0)\nexcept AssertionError:\n    print('raised')\n"
        "else:\n    print('passed')\n")
    cache = str(tmp_path / "cache")
    outputs = []
    for flags in (["-O"], [], ["-O"]):
        environment = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
        environment.update(PYTHONDONTWRITEBYTECODE="1", PATHPROF_CACHE_DIR=cache)
        done = subprocess.run([sys.executable, *flags, "-m", "pathprof", "run", "app.py"],
                              cwd=tmp_path, env=environment, capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        outputs.append(done.stdout)
    assert outputs == ["passed\n", "raised\n", "passed\n"]
    assert len(_entries(tmp_path / "cache")) == 2


@pytest.mark.usefixtures("no_cache_variable")
def test_threads_making_the_directory_at_once_all_cache(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    import threading

    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    options = _options(tmp_path / "fresh")
    paths = []
    for index in range(8):
        paths.append(tmp_path / f"m{index}.py")
        paths[-1].write_text(f"def f(x):\n    return {index} if x else 0\n")
    codes = [compile(p.read_text(), str(p), "exec") for p in paths]
    start = threading.Barrier(len(paths))
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def cache(path: Path, code: Any) -> None:
        where = codecache.places(str(path), options.tag(), options.cache_dir)
        digest = hashlib.sha256(path.read_bytes()).digest()
        start.wait()
        written.append(codecache.write(where, digest, str(path), code))

    written: list[str | None] = []
    threads = [threading.Thread(target=cache, args=item)
               for item in zip(paths, codes, strict=True)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert written == [str(tmp_path / "fresh")] * len(paths)
    assert len(_entries(tmp_path / "fresh")) == len(paths)
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("fresh")) == ["fresh"]
    assert capsys.readouterr().err == ""
