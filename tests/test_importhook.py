"""The import hook's selection, its fallbacks, and its cache."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest

from pathprof.measure import importhook
from pathprof.measure.importhook import ImportHook, InstrumentOptions, instrumented_code
from pathprof.python.selection import Selection


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


def test_cache_is_keyed_on_source_and_options(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    stats: dict[str, int] = {}
    options = InstrumentOptions()
    first = instrumented_code(path.read_bytes(), str(path), options, stats)
    again = instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"instrumented": 1, "cache_hits": 1}
    assert again.co_consts == first.co_consts
    instrumented_code(path.read_bytes(), str(path), InstrumentOptions(mode="edge"), stats)
    assert stats["instrumented"] == 2
    path.write_text("def f(x):\n    return 3\n")
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats["instrumented"] == 3
    # A corrupt cache file is ignored and rewritten, never trusted.
    (cached,) = (tmp_path / "__pycache__").glob(f"m.*.pathprof-{options.tag()}.pyc")
    cached.write_bytes(cached.read_bytes()[:40])
    instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats["instrumented"] == 4


def test_the_cache_follows_pythons_bytecode_settings(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """-B / PYTHONDONTWRITEBYTECODE: nothing written (pathprof instrument still warms
    the cache: that is what it is asked for); sys.pycache_prefix: the cache goes
    there, not beside the source."""
    path = tmp_path / "m.py"
    path.write_text("def f(x):\n    return 1 if x else 2\n")
    options = InstrumentOptions()
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    stats: dict[str, int] = {}
    for _ in range(2):
        code = instrumented_code(path.read_bytes(), str(path), options, stats)
    assert stats == {"instrumented": 2}
    assert code.co_filename == str(path)
    assert not (tmp_path / "__pycache__").exists()
    assert importhook.warm_cache([str(path)], options).instrumented == 1
    assert len(list((tmp_path / "__pycache__").glob("m.*.pathprof-*.pyc"))) == 1
    # With a prefix: written under it, mirroring the source's directory.
    other = tmp_path / "n.py"
    other.write_text("def g():\n    return 2\n")
    prefix = tmp_path / "prefix"
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(prefix))
    instrumented_code(other.read_bytes(), str(other), options, stats)
    assert [p.name.split(".")[0] for p in prefix.rglob("*.pathprof-*.pyc")] == ["n"]
    assert not list((tmp_path / "__pycache__").glob("n.*"))


def test_a_run_under_pythondontwritebytecode_writes_no_cache(tmp_path: Path) -> None:
    import subprocess

    (tmp_path / "lib.py").write_text("def f(x):\n    return x + 1\n")
    (tmp_path / "app.py").write_text("from lib import f\n\nprint(f(1))\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PATHPROF_")}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-m", "pathprof", "run", "app.py"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2\n")
    assert not list(tmp_path.rglob("*.pyc"))


def test_pathprof_failure_warns_and_runs_unmeasured(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "victim_mod.py").write_text("def f():\n    return 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("simulated pathprof bug")

    monkeypatch.setattr(importhook, "compile_instrumented", broken)
    hook = ImportHook(Selection(default_dirs=[str(tmp_path)]), InstrumentOptions(cache=False))
    hook.install()
    try:
        import victim_mod  # type: ignore[import-not-found]
        assert victim_mod.f() == 42
        err = capsys.readouterr().err
        assert err.startswith("pathprof: could not instrument ")
        assert err.count("\n") == 1
        assert "(RuntimeError: simulated pathprof bug); it runs unmeasured" in err
        assert "_@pp_m" not in vars(victim_mod)
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
