"""Read a CFG with named blocks from plain data (JSON), for examples and tools."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pathprof.exceptions import CfgError
from pathprof.graph.cfg import Cfg

__all__ = ["NamedCfg", "cfg_from_data"]


@dataclass(frozen=True)
class NamedCfg:
    """A :class:`Cfg` whose blocks have names."""

    cfg: Cfg
    names: tuple[str, ...]

    def spell(self, blocks: tuple[int, ...], sep: str = " ") -> str:
        return sep.join(self.names[b] for b in blocks)


def cfg_from_data(data: Mapping[str, Any]) -> NamedCfg:
    """Build a CFG from ``{"blocks": [...], "entry": name, "exit": name,
    "edges": [[src, dst], ...], "restarts": [...], "backedges": [[src, dst], ...]}``
    (block names are strings; ``backedges`` is optional and names edges of ``edges``:
    without it, :func:`~pathprof.graph.find_backedges` searches for them).

    >>> named = cfg_from_data({"blocks": ["in", "a", "out"], "entry": "in", "exit": "out",
    ...                        "edges": [["in", "a"], ["a", "out"]]})
    >>> named.cfg.edges
    ((0, 1), (1, 2))
    """
    try:
        names = [str(b) for b in data["blocks"]]
        index = {name: i for i, name in enumerate(names)}
        if len(index) != len(names):
            raise CfgError("block names must be unique")
        edges = tuple((index[str(s)], index[str(d)]) for s, d in data["edges"])
        cfg = Cfg(
            len(names),
            index[str(data["entry"])],
            index[str(data["exit"])],
            edges,
            tuple(index[str(b)] for b in data.get("restarts", ())),
            backedges=_backedges(data.get("backedges"), index, edges),
        )
    except KeyError as err:
        raise CfgError(f"CFG data names an unknown block or lacks a key: {err}") from err
    except (TypeError, ValueError) as err:
        raise CfgError(f"CFG data is malformed: {err}") from err
    return NamedCfg(cfg, tuple(names))


def _backedges(declared: Any, index: dict[str, int], edges: tuple[tuple[int, int], ...]
               ) -> tuple[int, ...] | None:
    """Edge ids of the declared ``[src, dst]`` backedges (every parallel edge)."""
    if declared is None:
        return None
    wanted = {(index[str(s)], index[str(d)]) for s, d in declared}
    ids = tuple(eid for eid, edge in enumerate(edges) if edge in wanted)
    missing = wanted - {edges[eid] for eid in ids}
    if missing:
        raise CfgError(f"declared backedges are not edges: {sorted(missing)}")
    return ids
