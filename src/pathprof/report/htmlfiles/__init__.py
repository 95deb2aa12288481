"""Templates, stylesheet and script of the HTML reports (package data), and what
every HTML report does with them: fill a template, embed data in a page, copy the
static files beside the pages; and the lines of the source files a report shows that
the data file does not hold (:func:`source_lines`, read by :mod:`pathprof.api` for the
subpath report: renderers read no file)."""

from __future__ import annotations

import json
import os
import shutil
import tokenize
from collections.abc import Iterable
from importlib import resources
from string import Template

__all__ = ["STATIC_FILES", "copy_static_files", "json_for_script", "source_lines", "template"]

STATIC_FILES = ("style.css", "pathprof.js")


def template(name: str) -> Template:
    return Template(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))


def source_lines(files: Iterable[str]) -> dict[str, list[str] | str]:
    """Each file's lines as it holds them now (decoded as Python decodes source), or
    why they cannot be read."""
    found: dict[str, list[str] | str] = {}
    for file in files:
        try:
            with tokenize.open(file) as f:
                found[file] = f.read().splitlines()
        except OSError as err:
            found[file] = err.strerror or str(err)
        except (SyntaxError, UnicodeDecodeError) as err:
            found[file] = f"not decodable: {err}"
    return found


def json_for_script(data: object) -> str:
    """JSON that can sit inside <script>: no "<" can end the element early."""
    return (json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
            .replace(">", "\\u003e").replace("&", "\\u0026"))


def copy_static_files(directory: str) -> None:
    """Copy the stylesheet and the script beside the pages in ``directory``."""
    static = resources.files(__name__)
    for name in STATIC_FILES:
        with resources.as_file(static.joinpath(name)) as source_file:
            shutil.copyfile(source_file, os.path.join(directory, name))
