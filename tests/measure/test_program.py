"""Unit tests of :mod:`pathprof.measure.program`: running a program as Python would.
In-process: :func:`resolve` (a script, ``-m`` module or console script; ``--`` dropped),
:func:`main_compiler` (the main script instrumented when selected, plainly otherwise,
plainly with a warning when instrumenting fails, and failing as Python does on bad
syntax), :func:`exit_status` (as Python computes ``SystemExit``'s) and
``_report_uncaught`` (the program's ``sys.excepthook``, and both tracebacks when the
hook itself raises). :func:`run_program` runs the program's end as the interpreter does
(its exit handlers, its threads) and :func:`die_of_sigint` kills the process, so both
run in one short child process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pathprof import messages
from pathprof.exceptions import ConfigError, PathprofError
from pathprof.measure import importhook
from pathprof.measure.importhook import InstrumentOptions
from pathprof.measure.program import (
    INTERRUPTED,
    Program,
    _report_uncaught,
    exit_status,
    main_compiler,
    resolve,
)
from pathprof.python.selection import Selection

# -- resolve ---------------------------------------------------------------------------


def test_a_module_is_run_by_name_measuring_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve("pkg.tool", ["-x", "y"], True) == Program(
        "pkg.tool", True, None, ["-x", "y"], [str(tmp_path)])


def test_a_script_is_found_and_its_directory_measured(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "sub").mkdir()
    script = tmp_path / "sub" / "prog.py"
    script.write_text("pass\n")
    monkeypatch.chdir(tmp_path)
    found = resolve("sub/prog.py", ["a"], False)
    assert found == Program("sub/prog.py", False, str(script), ["a"], [str(tmp_path / "sub")])


def test_a_leading_double_dash_of_the_arguments_is_dropped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve("m", ["--", "--flag", "--"], True).args == ["--flag", "--"]
    assert resolve("m", ["x", "--"], True).args == ["x", "--"]  # only a leading one


def test_a_double_dash_as_the_name_takes_the_program_from_the_arguments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prog.py").write_text("pass\n")
    found = resolve("--", ["prog.py", "1", "2"], False)
    assert (found.name, found.path, found.args) == ("prog.py", str(tmp_path / "prog.py"),
                                                    ["1", "2"])
    assert resolve("--", ["--", "mod", "-v"], True) == Program("mod", True, None, ["-v"],
                                                               [str(tmp_path)])


def test_nothing_after_a_double_dash_is_an_error() -> None:
    with pytest.raises(PathprofError, match="nothing to run after --"):
        resolve("--", [], False)
    with pytest.raises(PathprofError, match="nothing to run after --"):
        resolve("--", ["--"], True)


def test_a_console_script_on_path_measures_the_current_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir, work = tmp_path / "bin", tmp_path / "work"
    bin_dir.mkdir()
    work.mkdir()
    tool = bin_dir / "pp-unit-tool"
    tool.write_text("#!/usr/bin/env python3\nprint('tool')\n")
    tool.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.chdir(work)
    found = resolve("pp-unit-tool", [], False)
    assert found.path == str(tool)
    assert found.default_dirs == [str(work)]


def test_a_program_that_is_nowhere_is_a_config_error(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match="no such file or program: pp-no-such-program"):
        resolve("pp-no-such-program", [], False)


# -- main_compiler ---------------------------------------------------------------------

SCRIPT = b"def f(x):\n    if x:\n        return 1\n    return 2\n\nf(1)\n"


def _options() -> InstrumentOptions:
    return InstrumentOptions(cache=False)


def _pathprof_names(code: object) -> set[str]:
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(n for n in current.co_names if "@pp" in n)  # type: ignore[attr-defined]
        stack += [c for c in current.co_consts if hasattr(c, "co_names")]  # type: ignore[attr-defined]
    return names


def test_a_selected_main_script_is_compiled_instrumented(tmp_path: Path) -> None:
    script = str(tmp_path / "main.py")
    compile_main = main_compiler(Selection(source=[str(tmp_path)]), _options())
    code = compile_main(SCRIPT, script)
    assert code.co_filename == script
    assert _pathprof_names(code)  # the probes' names
    assert not _pathprof_names(compile(SCRIPT, script, "exec"))


def test_a_main_script_not_selected_is_compiled_plainly(tmp_path: Path) -> None:
    script = str(tmp_path / "main.py")
    compile_main = main_compiler(Selection(source=[str(tmp_path / "elsewhere")]), _options())
    code = compile_main(SCRIPT, script)
    assert not _pathprof_names(code)
    namespace: dict[str, object] = {}
    exec(code, namespace)
    assert namespace["f"](0) == 2  # type: ignore[operator]


def test_a_syntax_error_fails_as_python_does_even_when_selected(tmp_path: Path) -> None:
    script = str(tmp_path / "main.py")
    compile_main = main_compiler(Selection(source=[str(tmp_path)]), _options())
    with pytest.raises(SyntaxError) as raised:
        compile_main(b"x = (\n", script)
    assert raised.value.filename == script


def test_an_instrumenting_failure_runs_the_script_unmeasured_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(messages, "_said", set())

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a pathprof bug")

    monkeypatch.setattr(importhook, "compile_instrumented", broken)
    script = str(tmp_path / "main.py")
    code = main_compiler(Selection(source=[str(tmp_path)]), _options())(SCRIPT, script)
    assert not _pathprof_names(code)
    assert capsys.readouterr().err == (f"pathprof: could not instrument {script} "
                                       "(RuntimeError: a pathprof bug); it runs unmeasured\n")


def test_a_keyboard_interrupt_while_instrumenting_is_the_programs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(importhook, "compile_instrumented", interrupted)
    compile_main = main_compiler(Selection(source=[str(tmp_path)]), _options())
    with pytest.raises(KeyboardInterrupt):
        compile_main(SCRIPT, str(tmp_path / "main.py"))


# -- exit_status -----------------------------------------------------------------------


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), (255, 255),
                                              (-1, -1), (True, True)])
def test_an_integer_or_none_exit_code_is_the_status(code: object, status: int,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(code) == status
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(("code", "printed"), [("bye", "bye\n"), (["a"], "['a']\n"),
                                               (2.5, "2.5\n")])
def test_any_other_exit_code_is_printed_and_is_status_1(
        code: object, printed: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_status(code) == 1
    assert capsys.readouterr().err == printed


def test_interrupted_is_minus_two() -> None:
    assert INTERRUPTED == -2


# -- _report_uncaught ------------------------------------------------------------------


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def test_an_uncaught_exception_goes_to_the_programs_excepthook(
        monkeypatch: pytest.MonkeyPatch) -> None:
    heard: list[tuple[type[BaseException], BaseException, object]] = []
    monkeypatch.setattr(sys, "excepthook", lambda *args: heard.append(args))
    exc = _raised(ValueError("boom"))
    _report_uncaught(ValueError, exc, exc.__traceback__)
    assert heard == [(ValueError, exc, exc.__traceback__)]


def test_a_hook_that_raises_prints_both_as_python_does(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def hook(*args: object) -> None:
        raise RuntimeError("the hook broke")

    monkeypatch.setattr(sys, "excepthook", hook)
    exc = _raised(ValueError("boom"))
    _report_uncaught(ValueError, exc, exc.__traceback__)
    err = capsys.readouterr().err
    assert err.startswith("Error in sys.excepthook:\n")
    hook_part, original = err.split("\nOriginal exception was:\n")
    assert hook_part.rstrip().endswith("RuntimeError: the hook broke")
    assert "_report_uncaught" not in hook_part  # pathprof's frames are cut
    assert original.rstrip().endswith("ValueError: boom")


def test_a_hook_that_exits_is_reported_too(monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    def hook(*args: object) -> None:
        raise SystemExit(4)

    monkeypatch.setattr(sys, "excepthook", hook)
    exc = _raised(KeyError("k"))
    _report_uncaught(KeyError, exc, exc.__traceback__)  # does not exit
    err = capsys.readouterr().err
    assert "Error in sys.excepthook:" in err
    assert "SystemExit: 4" in err
    assert err.rstrip().endswith("KeyError: 'k'")


# -- run_program and die_of_sigint, in a child process ----------------------------------

DRIVER = textwrap.dedent("""\
    import json, sys
    from pathprof.measure.importhook import InstrumentOptions
    from pathprof.measure.program import die_of_sigint, main_compiler, resolve, run_program
    from pathprof.python.selection import Selection

    results = []
    for name in sys.argv[1:]:
        order = []
        program = resolve(name, ["arg"], False)
        compile_main = main_compiler(Selection(source=["/nowhere"]),
                                     InstrumentOptions(cache=False))
        status = run_program(program, lambda: order.append("start"),
                             lambda: order.append("stop"), compile_main)
        results.append([name, status, order, sys.argv[1:]])
    print(json.dumps(results))
    die_of_sigint()
    print("not reached")
""")

PROGRAMS = {
    "ok.py": "import sys\nprint('ran', sys.argv[1:])\n",
    "exits.py": "import sys\nsys.exit(7)\n",
    "says.py": "import sys\nsys.exit('a message')\n",
    "raises.py": textwrap.dedent("""\
        import atexit
        atexit.register(lambda: print('exit handler ran'))
        def broken():
            raise ValueError('uncaught')
        broken()
        """),
    "interrupted.py": "raise KeyboardInterrupt\n",
}


def test_a_program_runs_between_start_and_stop_with_pythons_statuses_and_ending(
        tmp_path: Path) -> None:
    (tmp_path / "driver.py").write_text(DRIVER)
    for name, text in PROGRAMS.items():
        (tmp_path / name).write_text(text)
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run([sys.executable, "driver.py", *PROGRAMS], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60, env=environment)
    lines = done.stdout.splitlines()
    assert lines[0] == "ran ['arg']"
    assert lines[1] == "exit handler ran"  # the program's exit handler, inside the run
    results = json.loads(lines[2])
    assert [(name, status) for name, status, _order, _argv in results] == [
        ("ok.py", 0), ("exits.py", 7), ("says.py", 1), ("raises.py", 1),
        ("interrupted.py", INTERRUPTED)]
    assert all(order == ["start", "stop"] for _name, _status, order, _argv in results)
    assert all(argv == list(PROGRAMS) for *_rest, argv in results)  # sys.argv put back
    assert "not reached" not in done.stdout
    assert done.returncode == -signal.SIGINT  # died of SIGINT, as Python does
    err = done.stderr
    assert "a message\n" in err
    # the uncaught exception's traceback shows the program's frames only
    traceback = err[err.index("Traceback"):err.index("ValueError: uncaught")]
    assert "raises.py" in traceback
    assert "pathprof" not in traceback.replace(str(tmp_path), "")
