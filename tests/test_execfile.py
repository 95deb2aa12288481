"""pathprof.measure.execfile: a signal's exception that comes as the program's window
closes, after its last line, is the program's end (a SIGINT on the last line is the
program's KeyboardInterrupt), and the window's exit is finished. Run in a child process:
the runner replaces ``__main__`` and ``sys.argv``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

DRIVER = textwrap.dedent("""
    import json, sys
    from pathprof.measure.execfile import run_script
    from pathprof.runtime import own_work

    exits = []

    class Window:
        '''own_work's window, whose first exit a SIGINT cuts short before it begins.'''
        def __init__(self):
            self.inner = own_work.released()
        def __enter__(self):
            self.inner.__enter__()
        def __exit__(self, *exc):
            exits.append(own_work.active)
            if len(exits) == 1:
                raise KeyboardInterrupt
            self.inner.__exit__(*exc)

    class Ending:
        def report(self, ended):
            return type(ended).__name__ if ended is not None else None
        def finish(self):
            pass

    with own_work:
        got = run_script(sys.argv[1], [], lambda source, path: compile(source, path, "exec"),
                         program=Window, ending=Ending())
        print(json.dumps([got, exits, own_work.active]))
""")


def test_a_signal_as_the_program_window_closes_is_the_programs_end(tmp_path: Path) -> None:
    (tmp_path / "driver.py").write_text(DRIVER)
    (tmp_path / "program.py").write_text("print('last line')\n")
    done = subprocess.run([sys.executable, "driver.py", "program.py"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "last line"
    # reported as the program's KeyboardInterrupt; the exit ran again, and own work
    # (released while the program ran) is held again after it
    assert json.loads(lines[1]) == ["KeyboardInterrupt", [False, False], True]
