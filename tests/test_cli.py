"""Tests for the command line (pathprof.cli)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pathprof.cli import ERR, OK, USAGE, main

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_plan_prints_numbering_probes_and_comparison(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "ball_larus_figure2.json")]) == OK
    out = capsys.readouterr().out
    assert "Paths (6 in all)" in out
    assert "count[r + 4] += 1" in out
    assert "A B C D E F" in out
    assert "16 with the spanning tree, 21 with Val on every edge" in " ".join(out.split())


def test_plan_of_a_graph_with_a_loop_and_a_handler(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(EXAMPLES / "loop_with_handler.json")]) == OK
    out = capsys.readouterr().out
    assert "Paths (7 in all)" in out
    assert "restart" in out
    assert "loop-header" in out
    assert "backedge" in out


def test_missing_file_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", str(tmp_path / "nope.json")]) == ERR
    err = capsys.readouterr().err
    assert err.startswith("pathprof: cannot read ")
    assert "nope.json" in err


def test_invalid_json_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["plan", str(bad)]) == ERR
    assert "is not valid JSON" in capsys.readouterr().err


def test_invalid_cfg_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "cfg.json"
    bad.write_text(json.dumps({"blocks": ["a", "b"], "entry": "a", "exit": "b",
                               "edges": [["b", "a"]]}))
    assert main(["plan", str(bad)]) == ERR
    assert "enters ENTRY" in capsys.readouterr().err
    bad.write_text(json.dumps({"blocks": ["a", "b"], "entry": "a", "exit": "zz", "edges": []}))
    assert main(["plan", str(bad)]) == ERR
    assert "unknown block" in capsys.readouterr().err


def test_no_command_prints_usage(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == USAGE
    assert "usage: pathprof" in capsys.readouterr().out
