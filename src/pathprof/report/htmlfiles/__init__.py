"""Templates, stylesheet and script of the HTML reports (package data), and what
every HTML report does with them: fill a template, embed data in a page, copy the
static files beside the pages."""

from __future__ import annotations

import json
import os
import shutil
from importlib import resources
from string import Template
from typing import Any

__all__ = ["STATIC_FILES", "copy_static_files", "json_for_script", "template"]

STATIC_FILES = ("style.css", "pathprof.js")


def template(name: str) -> Template:
    return Template(resources.files(__name__).joinpath(name).read_text(encoding="utf-8"))


def json_for_script(data: Any) -> str:
    """JSON that can sit inside <script>: no "<" can end the element early."""
    return (json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
            .replace(">", "\\u003e").replace("&", "\\u0026"))


def copy_static_files(directory: str) -> None:
    """Copy the stylesheet and the script beside the pages in ``directory``."""
    static = resources.files(__name__)
    for name in STATIC_FILES:
        with resources.as_file(static.joinpath(name)) as source_file:
            shutil.copyfile(source_file, os.path.join(directory, name))
