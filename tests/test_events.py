"""Event counting from the user's side: the API, ``pathprof count`` and the pytest
fixture. Exactness against the settrace oracle is in tests/python/test_event_counts.py."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from pathprof import events

from .test_pytest_plugin import pytest_in
from .test_run import pathprof_cli

WORK = '''
def bubble(items):
    items = list(items)
    for i in range(len(items)):
        for j in range(len(items) - 1 - i):
            if items[j] > items[j + 1]:
                items[j], items[j + 1] = items[j + 1], items[j]
    return items


def spin(n):
    i = 0
    while i < n:
        i += 1
    return i


def forever():
    i = 0
    while True:
        i += 1


def nested_budget():
    from pathprof import events

    with events.budget(100):
        spin(10)
    return "ok"
'''


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("events")
    (root / "eventwork.py").write_text(WORK)
    sys.path.insert(0, str(root))
    try:
        with events.EventCounter(source=[str(root)], cache=False):
            import eventwork
        yield eventwork
    finally:
        sys.path.remove(str(root))
        sys.modules.pop("eventwork", None)


def statements_of_spin(n: int) -> int:
    return 1 + (n + 1) + n + 1  # i = 0; n + 1 tests; n adds; return


def test_read_counts_exactly_what_ran(work) -> None:
    before = events.read()
    work.spin(10)
    assert events.read() - before == statements_of_spin(10)
    everyone = events.read(all_threads=True)
    thread = threading.Thread(target=work.spin, args=(5,))
    thread.start()
    thread.join()
    assert events.read(all_threads=True) - everyone == statements_of_spin(5)


def test_assert_events_at_most(work) -> None:
    assert events.assert_events_at_most(work.spin, 100, 10) == statements_of_spin(10)
    with pytest.raises(AssertionError, match=r"spin ran 23 events, more than the 22 allowed"):
        events.assert_events_at_most(work.spin, 22, 10)


def test_budget_stops_a_runaway_loop_deterministically(work) -> None:
    raised = []
    for _ in range(2):
        with pytest.raises(events.EventBudgetExceeded) as info, events.budget(1000):
            work.forever()
        raised.append((info.value.count, info.value.limit))
    # i = 0, then one statement per iteration: it stops at the first back edge
    # after the 1000th event, every time.
    assert raised == [(1001, 1000), (1001, 1000)]


def test_budget_not_exceeded_and_nested(work) -> None:
    with events.budget(10_000):
        assert work.nested_budget() == "ok"
        work.spin(100)
    with (pytest.raises(events.EventBudgetExceeded) as info, events.budget(10_000),
          events.budget(50)):
        work.spin(100)
    assert info.value.limit == 50
    assert 50 < info.value.count <= statements_of_spin(100)


def test_budget_rejects_a_negative_limit() -> None:
    with pytest.raises(ValueError, match="at least 0"), events.budget(-1):
        pass


def test_counts_self_and_inclusive(work) -> None:
    before = events.counts().by_name()
    work.bubble([3, 1, 2])
    work.nested_budget()
    after = events.counts().by_name()

    def grew(name: str, what: str) -> int:
        old = getattr(before[name], what) if name in before else 0
        return getattr(after[name], what) - old

    # copy; 4 outer steps; inner 3 + 2 + 1 steps, 2 + 1 tests, 2 swaps; return
    assert grew("bubble", "self") == grew("bubble", "inclusive") == 1 + 4 + 6 + 3 + 2 + 1
    # import, with (entry), spin(10) call, return; spin(10) inside
    assert grew("nested_budget", "self") == 4
    assert grew("nested_budget", "inclusive") == 4 + statements_of_spin(10)
    counted = events.counts()
    assert counted.total == sum(f.self for f in counted.functions)


def test_nothing_counted_is_an_error_not_a_pass(tmp_path: Path) -> None:
    script = "from pathprof import events\nevents.assert_events_at_most(print, 0)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=tmp_path)
    assert result.returncode == 1
    assert "no code is instrumented to count events" in result.stderr


def test_count_command_table_and_json(tmp_path: Path) -> None:
    (tmp_path / "eventwork.py").write_text(WORK)
    (tmp_path / "main.py").write_text(textwrap.dedent('''
        import eventwork

        def main():
            eventwork.spin(10)
            eventwork.bubble([2, 1])

        main()
    '''))
    result = pathprof_cli(tmp_path, "count", "--json", "-", "main.py")
    data = json.loads(result.stdout)
    by_name = {f["qualname"]: f for f in data["functions"]}
    assert data["kind"] == "statements"
    assert by_name["spin"]["self"] == by_name["spin"]["inclusive"] == statements_of_spin(10)
    # bubble([2, 1]): copy, 3 outer steps, 2 inner steps + 1, one test, one swap, return
    assert by_name["bubble"]["self"] == 1 + 3 + (2 + 1) + 1 + 1 + 1
    assert by_name["main"]["self"] == 2
    assert by_name["main"]["inclusive"] == 2 + by_name["spin"]["self"] + by_name["bubble"]["self"]
    assert data["total"] == sum(f["self"] for f in data["functions"])
    plain = pathprof_cli(tmp_path, "count", "main.py")
    assert plain.stdout == ""  # the program prints nothing: neither does pathprof there
    table = plain.stderr
    assert f"{data['total']} statements counted in 3 functions" in table
    assert "main main.py" in table
    instructions = json.loads(pathprof_cli(tmp_path, "count", "--kind", "instructions",
                                           "--json", "-", "main.py").stdout)
    assert instructions["kind"] == "instructions"
    assert instructions["total"] > data["total"]


def test_count_command_counts_its_functions_in_the_right_number(tmp_path: Path) -> None:
    """One function of one statement: "1 statement counted in 1 function" ("1
    statements counted in 1 functions" before); and with --top 1 of two, "1 more
    function"."""
    (tmp_path / "one.py").write_text("def f():\n    return 1\n\nf()\n")
    table = " ".join(pathprof_cli(tmp_path, "count", "one.py").stderr.split())
    assert re.search(r"^1 statement counted in 1 function(?!s)", table), table
    (tmp_path / "two.py").write_text("def f():\n    return 1\n\ndef g():\n    return f()\n\n"
                                     "g()\n")
    table = " ".join(pathprof_cli(tmp_path, "count", "--top", "1", "two.py").stderr.split())
    assert "counted in 2 functions" in table
    assert "1 more function (--top 0 shows all)" in table


def test_count_command_keeps_the_exit_status_and_json_file(tmp_path: Path) -> None:
    (tmp_path / "fails.py").write_text("def f():\n    raise SystemExit(3)\nf()\n")
    result = pathprof_cli(tmp_path, "count", "--json", "out.json", "fails.py", check=False)
    assert result.returncode == 3
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["functions"][0]["qualname"] == "f"
    assert data["functions"][0]["self"] == 1


PLUGIN_TESTS = '''
import eventwork


def test_budgeted(pathprof_events):
    assert pathprof_events.assert_at_most(100, eventwork.spin, 10) == 23
    with pathprof_events.at_most(23) as block:
        eventwork.spin(10)
    assert block.count == 23


def test_too_slow(pathprof_events):
    with pathprof_events.at_most(22):
        eventwork.spin(10)
'''


def test_pytest_fixture(tmp_path: Path) -> None:
    (tmp_path / "eventwork.py").write_text(WORK)
    (tmp_path / "test_perf.py").write_text(PLUGIN_TESTS)
    result = pytest_in(tmp_path, "--pathprof-events=eventwork", "test_perf.py")
    assert "1 failed, 1 passed" in result.stdout, result.stdout + result.stderr
    assert "the block ran 23 events, more than the 22 allowed" in result.stdout
    without = pytest_in(tmp_path, "test_perf.py")
    assert "needs pytest --pathprof-events=SOURCE" in without.stdout
    both = pytest_in(tmp_path, "--pathprof", "--pathprof-events", "test_perf.py")
    assert both.returncode == 4
    assert "cannot be used together" in both.stderr
