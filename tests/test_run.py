"""End to end: `pathprof run` and `pathprof report` as a user runs them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import pathprof
from pathprof.data import files
from pathprof.data.profile import FunctionProfile

PROGRAMS = Path(__file__).resolve().parent / "programs"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("app.py", "helper.py"):
        shutil.copy(PROGRAMS / name, tmp_path / name)
    return tmp_path


def default_sigint() -> None:
    """In a child: SIGINT at its default, as from a terminal, whatever the test runner
    inherited (a shell's background job has it ignored)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def pathprof_cli(cwd: Path, *args: str, check: bool = True, input: str | None = None
                 ) -> subprocess.CompletedProcess:
    path = os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])
    env = {**os.environ, "PATH": path, "COLUMNS": "160"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    result = subprocess.run([sys.executable, "-m", "pathprof", *args], cwd=cwd, env=env,
                            capture_output=True, text=True, timeout=120, input=input,
                            preexec_fn=default_sigint)
    if check:
        assert result.returncode == 0, result.stderr
    return result


def functions_by_name(data_file: Path) -> dict[str, FunctionProfile]:
    return {f.qualname: f for f in pathprof.load(str(data_file)).functions}


def test_run_measures_script_and_its_imports_exactly(project: Path) -> None:
    result = pathprof_cli(project, "run", "app.py", "700")
    assert result.stdout == "2 400\n"  # the program's own output, unchanged
    fns = functions_by_name(project / ".pathprof")
    classify = fns["classify"]
    # i % 7 - 2 for i < 700: 200 negatives, 100 zeros, 400 positives.
    assert sorted(p.count for p in classify.paths) == [100, 200, 400]
    assert classify.paths_possible == 3
    assert classify.paths_run == 3
    assert {p.end for p in classify.paths} == {"return"}
    total = fns["total"]
    assert total.total == 5  # 1 entry path, 3 iterations cut by the backedge, 1 exit
    assert {(p.start, p.end) for p in total.paths} == {
        ("entry", "loop-back"), ("loop-header", "loop-back"), ("loop-header", "return")}
    assert fns["explode"].total == 0  # measured, never called


def test_report_text_shows_hot_paths_on_source(project: Path) -> None:
    pathprof_cli(project, "run", "app.py", "700")
    text = pathprof_cli(project, "report").stdout
    assert "classify" in text
    assert "3 of 3 paths run" in text
    assert "return \"pos\"" in text
    assert "57.1%" in text  # 400 of 700
    assert "→ false" in text


def test_report_json_schema(project: Path) -> None:
    pathprof_cli(project, "run", "app.py", "700")
    data = json.loads(pathprof_cli(project, "report", "--format", "json").stdout)
    assert data["format"] == "pathprof"
    assert data["version"] == 1
    fn = next(f for f in data["functions"] if f["qualname"] == "classify")
    hottest = fn["paths"][0]
    assert hottest["count"] == 400
    assert hottest["start"] == "entry"
    assert hottest["end"] == "return"
    lines = [b["lines"] for b in hottest["blocks"]]
    assert lines == [[9, 9], [11, 11], [13, 13]]
    assert [d["taken"] for d in hottest["decisions"]] == ["false", "false"]


def test_program_exception_and_exit_status_are_kept(project: Path) -> None:
    failed = pathprof_cli(project, "run", "app.py", "10", "--fail", check=False)
    plain = subprocess.run([sys.executable, "app.py", "10", "--fail"], cwd=project,
                           capture_output=True, text=True)
    assert failed.returncode == plain.returncode == 1
    assert failed.stderr.splitlines()[-1] == "RuntimeError: boom"
    assert failed.stderr.splitlines()[-3:] == plain.stderr.splitlines()[-3:]
    fns = functions_by_name(project / ".pathprof")
    assert fns["explode"].raised == 1
    assert [(p.end, p.count) for p in fns["explode"].paths] == [("raise", 1)]
    exited = pathprof_cli(project, "run", "app.py", "10", "--exit", check=False)
    assert exited.returncode == 3


def test_append_adds_counts(project: Path) -> None:
    pathprof_cli(project, "run", "app.py", "7")
    pathprof_cli(project, "run", "--append", "app.py", "14")
    measurement = pathprof.load(str(project / ".pathprof"))
    assert len(measurement.runs) == 2
    classify = next(f for f in measurement.functions if f.qualname == "classify")
    assert classify.total == 21
    pathprof_cli(project, "run", "app.py", "7")
    assert len(pathprof.load(str(project / ".pathprof")).runs) == 1


def test_module_that_fails_to_parse_fails_as_without_pathprof(project: Path) -> None:
    (project / "broken.py").write_text("def ok():\n    return 1\n\ndef broken(:\n    pass\n")
    (project / "main.py").write_text("import broken\n")
    ours = pathprof_cli(project, "run", "main.py", check=False)
    plain = subprocess.run([sys.executable, "main.py"], cwd=project, capture_output=True,
                           text=True)
    assert ours.returncode == plain.returncode == 1
    assert ours.stderr.splitlines()[-4:] == plain.stderr.splitlines()[-4:]
    script = pathprof_cli(project, "run", "broken.py", check=False)
    assert script.returncode == 1
    assert "SyntaxError" in script.stderr.splitlines()[-1]


def test_dash_m_and_console_script_forms(project: Path) -> None:
    pathprof_cli(project, "run", "-m", "app", "7")
    assert functions_by_name(project / ".pathprof")["classify"].total == 7
    (project / "test_app.py").write_text(
        "import helper\n\ndef test_total():\n    assert helper.total([1, 2]) == 0\n")
    result = pathprof_cli(project, "run", "--", "pytest", "-q", "-p", "no:cacheprovider",
                          "test_app.py")
    assert "1 passed" in result.stdout
    assert functions_by_name(project / ".pathprof")["total"].total == 3


def test_a_console_script_comes_from_pathprofs_own_environment_first(project: Path) -> None:
    """A pyenv shim (a shell script) named pytest first on PATH: pathprof runs the
    pytest beside its own interpreter, as ``python -m pytest`` would."""
    if not (Path(sys.executable).parent / "pytest").exists():
        pytest.skip("no pytest console script beside this interpreter")
    shims = project / "shims"
    shims.mkdir()
    (shims / "pytest").write_text("#!/usr/bin/env bash\necho shim\nexit 7\n")
    (shims / "pytest").chmod(0o755)
    (project / "test_app.py").write_text(
        "import helper\n\ndef test_total():\n    assert helper.total([1, 2]) == 0\n")
    env = {**os.environ, "PATH": os.pathsep.join([str(shims), os.environ.get("PATH", "")])}
    done = subprocess.run([sys.executable, "-m", "pathprof", "run", "--", "pytest", "-q",
                           "-p", "no:cacheprovider", "test_app.py"], cwd=project, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert functions_by_name(project / ".pathprof")["total"].total == 3


def test_selection_source_and_omit(project: Path) -> None:
    pathprof_cli(project, "run", "--omit", "*/helper.py", "app.py", "7")
    assert "total" not in functions_by_name(project / ".pathprof")
    pathprof_cli(project, "run", "--source", "helper", "app.py", "7")
    assert set(functions_by_name(project / ".pathprof")) == {"total", "explode"}


def test_edge_mode_reports_branch_counts(project: Path) -> None:
    pathprof_cli(project, "run", "--mode", "edge", "app.py", "700")
    data = json.loads(pathprof_cli(project, "report", "--format", "json").stdout)
    fn = next(f for f in data["functions"] if f["qualname"] == "classify")
    branches = {(e["line"], e["label"]): e["count"] for e in fn["edges"]
                if e["label"] in ("true", "false")}
    assert branches == {(9, "true"): 200, (9, "false"): 500, (11, "true"): 100,
                        (11, "false"): 400}
    assert "branch" in pathprof_cli(project, "report").stdout


def test_time_metric_records_time_per_path(project: Path) -> None:
    pathprof_cli(project, "run", "--metric", "time", "app.py", "70")
    classify = functions_by_name(project / ".pathprof")["classify"]
    assert {p.id for p in classify.paths} == set(classify.times)
    assert all(p.time_ns is not None and p.time_ns > 0 for p in classify.paths)
    assert "time" in pathprof_cli(project, "report").stdout


def test_instrumented_code_is_cached(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where Python writes bytecode and no cache directory is configured: in
    __pycache__, as Python's own."""
    monkeypatch.delenv("PATHPROF_CACHE_DIR", raising=False)
    pathprof_cli(project, "run", "app.py", "7")
    cached = list((project / "__pycache__").glob("helper.*.pathprof-*.pyc"))
    assert len(cached) == 1
    stamp = cached[0].stat().st_mtime_ns
    pathprof_cli(project, "run", "app.py", "7")
    assert cached[0].stat().st_mtime_ns == stamp  # read, not rewritten
    assert functions_by_name(project / ".pathprof")["total"].total == 5
    (project / "helper.py").write_text(
        (project / "helper.py").read_text() + "\n\ndef added():\n    return 1\n")
    pathprof_cli(project, "run", "app.py", "7")
    assert "added" in functions_by_name(project / ".pathprof")
    pathprof_cli(project, "run", "--mode", "edge", "app.py", "7")
    assert len(list((project / "__pycache__").glob("helper.*.pathprof-*.pyc"))) == 2


def test_corrupt_data_file_is_reported_and_kept(project: Path) -> None:
    (project / ".pathprof").write_bytes(b"this is not sqlite at all" * 40)
    result = pathprof_cli(project, "run", "app.py", "7")
    # Said once, in one line of its own (not a Python warning with a source line).
    said = [line for line in result.stderr.splitlines() if "not a pathprof data file" in line]
    assert len(said) == 1
    assert said[0].startswith("pathprof: ")
    assert "Warning" not in result.stderr
    assert (project / ".pathprof").read_bytes() == b"this is not sqlite at all" * 40
    saved = list(project.glob(".pathprof.saved.*"))
    assert len(saved) == 1
    assert [part.kind for part in files.parse(saved[0].name, ".pathprof") or []] == ["saved"]
    assert functions_by_name(saved[0])["classify"].total == 7
    report = pathprof_cli(project, "report", check=False)
    assert report.returncode == 1
    assert "not a pathprof data file" in report.stderr


def test_report_without_data_is_a_clear_error(tmp_path: Path) -> None:
    result = pathprof_cli(tmp_path, "report", check=False)
    assert result.returncode == 1
    assert "no data file" in result.stderr


def test_combine_adds_saved_aside_files(project: Path) -> None:
    pathprof_cli(project, "run", "--data-file", ".pathprof.one", "app.py", "7")
    pathprof_cli(project, "run", "--data-file", ".pathprof.two", "app.py", "14")
    result = pathprof_cli(project, "combine")
    assert "combined 2 data files" in result.stdout
    assert functions_by_name(project / ".pathprof")["classify"].total == 21
    assert not list(project.glob(".pathprof.*"))
    assert pathprof_cli(project, "combine", check=False).returncode == 1


def test_pyproject_settings_apply_and_flags_override(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.pathprof]\nomit = ["*/helper.py"]\ndata_file = "prof.db"\nmode = "edge"\n')
    pathprof_cli(project, "run", "app.py", "7")
    fns = functions_by_name(project / "prof.db")
    assert "total" not in fns
    assert fns["classify"].edges
    pathprof_cli(project, "run", "--mode", "path", "app.py", "7")
    assert functions_by_name(project / "prof.db")["classify"].total == 7
    (project / "pyproject.toml").write_text('[tool.pathprof]\nbogus = 1\n')
    result = pathprof_cli(project, "run", "app.py", "7", check=False)
    assert result.returncode == 1
    assert "unknown setting tool.pathprof.bogus" in result.stderr


@pytest.mark.parametrize("command", [["report"], ["report", "--format", "json"],
                                     ["coverage", "-m"]])
def test_a_reader_that_goes_away_ends_the_output_quietly(tmp_path: Path,
                                                         command: list[str]) -> None:
    """``pathprof report | head``: no traceback, no complaint on stderr."""
    lines = [f"def f{i}(x):\n    if x:\n        return 1\n    return 2\n" for i in range(400)]
    lines += [f"f{i}(1); f{i}(0)\n" for i in range(400)]
    (tmp_path / "many.py").write_text("".join(lines), encoding="utf-8")
    pathprof_cli(tmp_path, "run", "many.py")
    reader = subprocess.Popen([sys.executable, "-m", "pathprof", *command], cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert reader.stdout is not None
    assert reader.stderr is not None
    reader.stdout.readline()
    reader.stdout.close()  # the reader goes away with most of the output unread
    err = reader.stderr.read()
    reader.wait(timeout=120)
    assert err == b""
    assert reader.returncode in (0, 1)  # 1: what Python's own docs advise on EPIPE


def test_source_takes_a_comma_list_and_names_what_matched_nothing(tmp_path: Path) -> None:
    (tmp_path / "first_mod.py").write_text("def one(x):\n    return x + 1\n", encoding="utf-8")
    (tmp_path / "second_mod.py").write_text("def two(x):\n    return x * 2\n",
                                            encoding="utf-8")
    (tmp_path / "main.py").write_text(
        "import first_mod, second_mod\nprint(first_mod.one(1), second_mod.two(3))\n",
        encoding="utf-8")
    result = pathprof_cli(tmp_path, "run", "--source", "first_mod, second_mod,no_such_mod",
                          "main.py")
    assert result.stdout == "2 6\n"
    fns = functions_by_name(tmp_path / ".pathprof")
    assert sorted(fns) == ["one", "two"]
    assert fns["one"].total == 1
    assert fns["two"].total == 1
    assert result.stderr.splitlines() == [
        "pathprof: source 'no_such_mod' matched no module or file imported while measuring: "
        "nothing of it was measured"]


def test_stop_counting_sends_functions_back_and_says_so(project: Path) -> None:
    """``run --stop-counting basis``: ``classify``'s 3 paths are its basis and ran in
    the first calls, so the 700 calls are not all counted; its coverage is the same,
    the data file and the report say its counts are lower bounds, and ``diff``
    warns about comparing such counts."""
    every = pathprof_cli(project, "run", "--data-file", "every", "app.py", "700")
    stopping = pathprof_cli(project, "run", "--stop-counting", "basis", "--data-file",
                            "stopping", "app.py", "700")
    assert stopping.stdout == every.stdout == "2 400\n"
    full, partial = functions_by_name(project / "every"), functions_by_name(project / "stopping")
    classify = partial["classify"]
    assert classify.stopped
    assert not full["classify"].stopped
    assert classify.paths_run == full["classify"].paths_run == 3
    assert 3 <= classify.total < full["classify"].total == 700
    report = pathprof_cli(project, "report", "--data-file", "stopping").stdout
    assert ("stopped counting (it or a loop of it went back to its original code): "
            "counts are lower bounds") in report
    diff = pathprof_cli(project, "diff", "every", "stopping")
    assert "stopped counting (--stop-counting basis" in diff.stderr


@pytest.mark.parametrize("extra", [("--metric", "time"), ("--mode", "edge"),
                                   ("--parallel", "2")])
def test_stop_counting_refuses_what_needs_every_count(project: Path,
                                                      extra: tuple[str, ...]) -> None:
    done = pathprof_cli(project, "run", "--stop-counting", "basis", *extra, "app.py", "7",
                        check=False)
    assert done.returncode != 0
    assert "stop" in done.stderr
    assert "counting" in done.stderr
    assert not (project / ".pathprof").exists()


WARNS_AT_COMPILE = '''\
import warner


def loops(n):
    total = 0
    for i in range(n):
        while total < i:
            if i is 1:
                total += 2
            total += 1
    return total


print(loops(4), warner.loops(4))
'''


@pytest.mark.parametrize("stop", ["never", "basis"])
def test_compile_warnings_show_as_often_as_without_pathprof(tmp_path: Path, stop: str) -> None:
    """A SyntaxWarning in a script and in a module it imports shows once each, as
    without pathprof, although the instrumented code holds the expression thrice
    (measured, the function's original body, the loop's); ``-W error`` fails the
    import as Python does."""
    (tmp_path / "script.py").write_text(WARNS_AT_COMPILE, encoding="utf-8")
    (tmp_path / "warner.py").write_text(WARNS_AT_COMPILE.split("\n", 1)[1].rsplit(
        "\n\nprint", 1)[0] + "\n", encoding="utf-8")

    def plain(*flags: str) -> subprocess.CompletedProcess:
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
        return subprocess.run([sys.executable, *flags, "script.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, check=False)

    def measured(*flags: str) -> subprocess.CompletedProcess:
        shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
        return subprocess.run([sys.executable, *flags, "-m", "pathprof", "run", "--no-cache",
                               "--stop-counting", stop, "script.py"], cwd=tmp_path,
                              capture_output=True, text=True, timeout=60, check=False)

    expected, got = plain(), measured()
    assert expected.stderr.count("SyntaxWarning") == 2  # the script's and the module's
    assert got.stdout == expected.stdout
    assert got.stderr.count("SyntaxWarning") == 2, got.stderr
    failing, failed = plain("-W", "error::SyntaxWarning"), measured("-W", "error::SyntaxWarning")
    assert failing.returncode != 0
    assert failed.returncode == failing.returncode
    assert failed.stderr.splitlines()[-1] == failing.stderr.splitlines()[-1]


def test_a_warning_another_thread_issues_during_an_instrumented_compile_is_kept(
        tmp_path: Path) -> None:
    """The compile's warnings are caught with the (global) warning filters: one that
    is not the compiled file's goes out again, not lost."""
    import warnings

    from pathprof.measure.importhook import InstrumentOptions, compile_instrumented

    source = b"def f(x):\n    return x is 1\n"

    def warns_elsewhere(*args: object, **kwargs: object) -> object:
        warnings.warn_explicit("from another thread", UserWarning, "elsewhere.py", 7)
        return real(*args, **kwargs)

    import pathprof.measure.importhook as importhook

    real = importhook._compile_instrumented
    importhook._compile_instrumented = warns_elsewhere  # type: ignore[assignment]
    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            compile_instrumented(source, str(tmp_path / "m.py"), InstrumentOptions())
    finally:
        importhook._compile_instrumented = real  # type: ignore[assignment]
    assert [(str(w.message), w.filename, w.lineno) for w in seen
            if w.category is UserWarning] == [("from another thread", "elsewhere.py", 7)]
    assert [w.lineno for w in seen if w.category is SyntaxWarning] == [2]
