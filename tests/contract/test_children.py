"""Every Python process of the program is measured (issue 23 §2): children made by
multiprocessing's spawn, forkserver and fork, and subprocess children running
Python, all saved into the one data file."""

from __future__ import annotations

import io
import os
import sysconfig
import textwrap
from contextlib import redirect_stderr
from pathlib import Path

import pytest

import pathprof
from pathprof.measure.children import STARTUP_LINE, ChildMeasurement

from ..test_run import pathprof_cli
from . import WORK

PROGRAM = """
    import multiprocessing as mp, os, subprocess, sys
""" + WORK + """
    if __name__ == "__main__":
        how = sys.argv[1]
        if how in ("spawn", "forkserver", "fork"):
            with mp.get_context(how).Pool(3) as pool:
                print(sum(pool.map(work, [30] * 9)))
        elif how == "subprocess":
            code = "import helper; print(helper.work(30))"
            print(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                 text=True).stdout.strip())
        elif how == "subprocess-env":
            env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": os.getcwd()}
            code = "import helper; print(helper.work(30))"
            print(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                                 text=True).stdout.strip())
        elif how == "script":
            result = subprocess.run([sys.executable, "child.py"], capture_output=True,
                                    text=True)
            print(result.stdout.strip())
            print(result.stderr.strip())
"""

@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "prog.py").write_text(textwrap.dedent(PROGRAM))
    (tmp_path / "helper.py").write_text(textwrap.dedent(WORK))
    (tmp_path / "child.py").write_text("import helper\nprint(helper.work(30))\n")
    return tmp_path


def _totals(project: Path) -> dict[str, int]:
    return {f"{Path(fn.file).name}:{fn.qualname}": fn.total
            for fn in pathprof.load(str(project / ".pathprof")).functions}


def _leftovers(project: Path) -> list[str]:
    site = Path(sysconfig.get_paths()["purelib"])
    return ([p.name for p in project.glob(".pathprof.*")]
            + [p.name for p in site.glob(f"pathprof-children-{os.getpid()}-*")])


@pytest.mark.parametrize("method", ["spawn", "forkserver", "fork"])
def test_multiprocessing_children_are_measured(project: Path, method: str) -> None:
    result = pathprof_cli(project, "run", "prog.py", method)
    assert result.stdout == "2700\n"
    assert result.stderr == ""
    # 9 calls of work in the pool's children: entry, 29 iterations, the end each
    assert _totals(project)["prog.py:work"] == 9 * 31
    assert _leftovers(project) == []


@pytest.mark.parametrize("how", ["subprocess", "subprocess-env"])
def test_subprocess_children_running_python_are_measured(project: Path, how: str) -> None:
    result = pathprof_cli(project, "run", "prog.py", how)
    assert result.stdout == "300\n"
    assert _totals(project)["helper.py:work"] == 31
    assert _leftovers(project) == []


def test_the_main_script_of_a_subprocess_child_is_named_as_not_measured(project: Path
                                                                        ) -> None:
    result = pathprof_cli(project, "run", "prog.py", "script")
    out, err = result.stdout.splitlines()
    assert out == "300"
    assert err == ("pathprof: the main script of a child process is not measured (what it "
                   "imports is): child.py")
    assert _totals(project)["helper.py:work"] == 31


def test_a_run_without_children_leaves_python_alone(project: Path) -> None:
    """Nothing is written into site-packages until the program starts a child (the
    program looks, while it runs, for a file of its own process: pathprof runs it
    in-process)."""
    (project / "alone.py").write_text(textwrap.dedent("""
        import glob, os, sysconfig
        site = sysconfig.get_paths()["purelib"]
        print(glob.glob(os.path.join(site, f"pathprof-children-{os.getpid()}-*")))
    """))
    assert pathprof_cli(project, "run", "alone.py").stdout == "[]\n"


def test_what_a_killed_run_left_in_site_packages_is_removed(project: Path) -> None:
    site = Path(sysconfig.get_paths()["purelib"])
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    stale = site / f"pathprof-children-{dead}-0123456789ab.pth"
    stale.write_text(STARTUP_LINE)
    try:
        pathprof_cli(project, "run", "prog.py", "subprocess")
        assert not stale.exists()
    finally:
        stale.unlink(missing_ok=True)


def test_children_that_cannot_be_measured_are_named_once(tmp_path: Path) -> None:
    (tmp_path / "not_a_directory").write_text("")
    measurement = ChildMeasurement({"token": "abc"})
    measurement.pth = str(tmp_path / "not_a_directory" / "x.pth")
    said = io.StringIO()
    with redirect_stderr(said):
        measurement.before_child("subprocess ['python', 'a.py']")
        measurement.before_child("subprocess ['python', 'b.py']")
    assert said.getvalue().count("\n") == 1
    assert said.getvalue().startswith("pathprof: child processes are not measured "
                                      "(subprocess ['python', 'a.py'] and any after it)")
