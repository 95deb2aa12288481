"""Configuration files: [tool.pathprof] in pyproject.toml and .pathprofrc."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from pathprof.config import (
    CACHE_DIR_VARIABLE,
    CacheDir,
    Config,
    cache_dir,
    configured_cache_dir,
    read_config,
)
from pathprof.exceptions import ConfigError
from pathprof.pytest.session import REPORT_KINDS, report_kind


def test_pyproject_table_with_the_flag_names(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "pyproject.toml").write_text(
        '[tool.pathprof]\nsource = ["src"]\nfail-under = 42\nreport = "html"\n'
        'context = "test"\ndata_file = "d.pathprof"\n')
    nested = tmp_path / "a" / "b"
    nested.mkdir(parents=True)
    config = read_config(str(nested))
    assert config.source == [str(tmp_path / "src")]
    assert config.fail_under == 42.0
    assert config.report == ["html"]
    assert config.context == "test"
    assert config.data_file == str(tmp_path / "d.pathprof")
    assert config.path == str(tmp_path / "pyproject.toml")


def test_pathprofrc_wins_over_pyproject_in_the_same_directory(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 10\n")
    (tmp_path / ".pathprofrc").write_text("fail_under = 20.5\nomit = ['*/gen/*']\n")
    config = read_config(str(tmp_path))
    assert config.fail_under == 20.5
    assert config.omit == ["*/gen/*"]
    assert config.path == str(tmp_path / ".pathprofrc")


def test_nearest_directory_wins(tmp_path: Path) -> None:
    (tmp_path / ".pathprofrc").write_text("fail_under = 1\n")
    inner = tmp_path / "inner"
    inner.mkdir()
    (inner / "pyproject.toml").write_text("[tool.pathprof]\nfail_under = 2\n")
    assert read_config(str(inner)).fail_under == 2.0


@pytest.mark.parametrize(("text", "message"), [
    ("fail_under = 'high'\n", "fail_under must be a number"),
    ("fail_under = true\n", "fail_under must be a number"),
    ("report = [1]\n", "report must be a list of strings"),
    ("colour = 'red'\n", "unknown setting tool.pathprof.colour"),
    ("fail_under = \n", "cannot read"),
])
def test_bad_settings_name_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / ".pathprofrc").write_text(text)
    with pytest.raises(ConfigError, match=message) as caught:
        read_config(str(tmp_path))
    assert ".pathprofrc" in str(caught.value)


def test_cache_dir_setting_is_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.pathprof]\ncache-dir = 'build/pp'\n")
    (tmp_path / "sub").mkdir()
    assert read_config(str(tmp_path / "sub")).cache_dir == str(tmp_path / "build" / "pp")
    (tmp_path / ".pathprofrc").write_text("cache_dir = ''\n")
    with pytest.raises(ConfigError, match="cache_dir is empty"):
        read_config(str(tmp_path))


def test_which_cache_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--cache-dir, else PATHPROF_CACHE_DIR, else cache_dir (all three always used);
    else .pathprof_cache beside the configuration file, or in the directory itself."""
    monkeypatch.delenv(CACHE_DIR_VARIABLE, raising=False)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    alone = tmp_path / "alone"
    alone.mkdir()
    assert cache_dir(start=str(alone)) == CacheDir(str(alone / ".pathprof_cache"), False)
    (project / "pyproject.toml").write_text("[tool.pathprof]\n")
    default = CacheDir(str(project / ".pathprof_cache"), False)
    assert cache_dir(start=str(project / "src")) == default
    monkeypatch.chdir(project / "src")
    assert cache_dir() == default
    config = read_config()
    assert configured_cache_dir(config) is None
    config.cache_dir = str(project / "from-config")
    assert configured_cache_dir(config) == str(project / "from-config")
    assert cache_dir(configured_cache_dir(config)) == CacheDir(str(project / "from-config"),
                                                               True)
    monkeypatch.setenv(CACHE_DIR_VARIABLE, "from-variable")
    assert configured_cache_dir(config) == "from-variable"
    assert cache_dir() == CacheDir(str(project / "src" / "from-variable"), True)
    assert configured_cache_dir(config, "from-flag") == "from-flag"
    assert cache_dir("from-flag") == CacheDir(str(project / "src" / "from-flag"), True)


ROOT = Path(__file__).resolve().parent.parent


def _table_rows(page: str) -> dict[str, str]:
    """The rows of a Markdown table whose first cell names keys: key -> row."""
    rows = {}
    for line in page.splitlines():
        if line.startswith("| `"):
            first = line.split("|")[1]
            for key in re.findall(r"`([a-z_]+)`", first):
                rows[key] = line
    return rows


def test_the_configuration_page_documents_every_key_and_report_kind() -> None:
    """docs/configuration.md against pathprof.config: a row per key the files take,
    and every --pathprof-report kind (lcov and xml were missing)."""
    rows = _table_rows((ROOT / "docs" / "configuration.md").read_text())
    keys = {f.name for f in dataclasses.fields(Config)} - {"path"}
    assert set(rows) == keys
    for kind in REPORT_KINDS:
        assert f"`{kind}" in rows["report"], kind
    assert "`lcov[:FILE]`" in rows["report"]
    assert "`xml[:FILE]`" in rows["report"]


@pytest.mark.parametrize("page", ["README.md", "docs/configuration.md"])
def test_the_documented_examples_are_valid_configurations(tmp_path: Path, page: str
                                                          ) -> None:
    """Every ``[tool.pathprof]`` example reads without error, and its reports are
    ones pytest --pathprof takes."""
    text = (ROOT / page).read_text()
    examples = [block for block in re.findall(r"```toml\n(.*?)```", text, re.S)
                if "[tool.pathprof]" in block]
    assert examples
    for example in examples:
        (tmp_path / "pyproject.toml").write_text(example)
        config = read_config(str(tmp_path))
        assert config.source, example
        for report in config.report:
            assert report_kind(report) == report
