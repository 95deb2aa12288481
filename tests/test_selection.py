"""Selection.files: the source files a selection wants, found on disk without importing."""

from __future__ import annotations

from pathlib import Path

from pathprof.python.selection import Selection


def make_tree(root: Path) -> None:
    for name in ("pkg/__init__.py", "pkg/a.py", "pkg/sub/__init__.py", "pkg/sub/b.py",
                 "pkg/sub/__pycache__/c.py", "pkg/.hidden/d.py", "pkg/data.txt", "top.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")


def test_module_names_are_found_on_the_search_path(tmp_path: Path) -> None:
    make_tree(tmp_path)
    selection = Selection(["pkg"], (), ("*/sub/b.py",), ())
    found = {name: Path(path).relative_to(tmp_path).as_posix()
             for name, path in selection.files([str(tmp_path)])}
    assert found == {"pkg": "pkg/__init__.py", "pkg.a": "pkg/a.py",
                     "pkg.sub": "pkg/sub/__init__.py"}  # b.py omitted; hidden, cache skipped


def test_directories_and_single_modules(tmp_path: Path) -> None:
    make_tree(tmp_path)
    by_dir = Selection([str(tmp_path / "pkg" / "sub")], (), (), ())
    assert [Path(p).name for _n, p in by_dir.files()] == ["__init__.py", "b.py"]
    by_module = Selection(["top"], (), (), ())
    assert [(n, Path(p).name) for n, p in by_module.files([str(tmp_path)])] == [("top", "top.py")]
    default = Selection((), ("*/a.py",), (), [str(tmp_path)])
    assert [Path(p).name for _n, p in default.files()] == ["a.py"]


def test_source_entries_split_on_commas_and_track_what_matched(tmp_path: Path) -> None:
    selection = Selection(source=["alpha, beta", "gamma"], default_dirs=[str(tmp_path)])
    assert selection.wants("beta.sub", str(tmp_path / "beta" / "sub.py"))
    assert not selection.wants("delta", str(tmp_path / "delta.py"))
    assert selection.unmatched() == ["alpha", "gamma"]
    assert selection.wants("alpha", str(tmp_path / "alpha.py"))
    assert selection.unmatched() == ["gamma"]
