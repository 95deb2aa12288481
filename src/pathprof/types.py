"""Type aliases that say what an ``int`` means in pathprof's signatures."""

from __future__ import annotations

from typing import TypeAlias

#: A basic block of a control-flow graph, numbered from 0.
BlockId: TypeAlias = int
#: An edge of a :class:`~pathprof.graph.cfg.Cfg`, numbered from 0 in the order given.
EdgeId: TypeAlias = int
#: An edge of a :class:`~pathprof.graph.cfg.Dag` (CFG edges minus backedges, plus dummies).
DagEdgeId: TypeAlias = int
#: A Ball-Larus path number: the sum of edge values along an acyclic path.
PathId: TypeAlias = int
#: A path an exception cut short, as the runtime records it: the block the exception
#: left the function from and the prefix value the path register held there (Ball
#: 1994's query increments; :func:`~pathprof.graph.numbering.regenerate_prefix`).
Cut: TypeAlias = tuple[BlockId, int]
#: Which path of a function a profile counts: a complete path's number, or the
#: :data:`Cut` of a path an exception cut short.
PathOrCut: TypeAlias = PathId | Cut
