"""The ``pathprof`` command line: parses arguments and calls the library.

Exit codes: 0 success, 1 a pathprof error (message printed, no traceback),
2 bad usage.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from pathprof import __version__
from pathprof.exceptions import PathprofError

OK, ERR, USAGE = 0, 1, 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pathprof",
        description="Exact acyclic path profiles (Ball-Larus) for Python programs.",
    )
    parser.add_argument("--version", action="version", version=f"pathprof {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    plan = commands.add_parser(
        "plan",
        help="show the path numbering and probe plan of a CFG given as JSON",
        description="Number the acyclic paths of a control-flow graph (Ball-Larus §3.1), "
        "place probes on the chords of a maximum spanning tree (§3.2-3.3), and compare "
        "with the naive plan.",
    )
    plan.add_argument("cfg_file", metavar="CFG.json")
    return parser


def _command_plan(args: argparse.Namespace) -> int:
    from rich.console import Console

    from pathprof.graph.serial import cfg_from_data
    from pathprof.report.plan import render_plan, summarize_plan

    try:
        with open(args.cfg_file, encoding="utf-8") as f:
            data = json.load(f)
    except OSError as err:
        raise PathprofError(f"cannot read {args.cfg_file}: {err.strerror}") from err
    except json.JSONDecodeError as err:
        raise PathprofError(f"{args.cfg_file} is not valid JSON: {err}") from err
    console = Console()
    if isinstance(data, dict) and data.get("description"):
        console.print(f"[bold]{data['description']}[/bold]")
    console.print(render_plan(summarize_plan(cfg_from_data(data))))
    return OK


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return USAGE
    handlers = {"plan": _command_plan}
    try:
        return handlers[args.command](args)
    except PathprofError as err:
        print(f"pathprof: {err}", file=sys.stderr)
        return ERR


if __name__ == "__main__":
    sys.exit(main())
