"""Basis path coverage: how many linearly independent paths of a function ran.

McCabe's structured testing (A. H. Watson and T. J. McCabe, "Structured Testing: A
Testing Methodology Using the Cyclomatic Complexity Metric", NIST Special
Publication 500-235, 1996, §2 and §5) treats each path of a control-flow graph as
a vector over the graph's edges, 1 where the path uses an edge, and asks the tests
to exercise a *basis* of the space all paths span: as many linearly independent
paths as the graph's cyclomatic complexity. Here the graph is the function's
numbered DAG (Ball-Larus 1996, §4: loops cut into dummy ENTRY -> header and
latch -> EXIT edges), so its ENTRY -> EXIT paths are exactly the acyclic paths
pathprof counts. Per function:

* the *dimension* is that of the space spanned by all ENTRY -> EXIT paths of the
  DAG: ``E - N + 2`` over the edges and blocks that lie on some such path (a
  DAG's s-t flows form a space of that dimension, and its paths span it);
* *covered* is the rank, over the rationals, of the vectors of the paths that ran.

Unlike "paths run / paths possible", the dimension grows linearly with the number
of decisions, never exponentially, so a sum over functions is not decided by the
function with the most paths.

Paths an exception cut short (the :data:`~pathprof.data.profile.Cut` keys of a
profile's ``cuts``) are not ENTRY -> EXIT paths and do not count towards the basis; a
path that starts at a loop header or a handler (after a dummy edge) does.

Invariant: ``0 <= covered <= dimension``, and ``covered == dimension`` when every
path of the function ran.
"""

from __future__ import annotations

from collections.abc import Iterable
from math import gcd

from pathprof.data.profile import FunctionProfile, numbering_of
from pathprof.graph import Dag, Numbering, regenerate

__all__ = ["BasisBuilder", "basis_coverage", "basis_rank", "path_space_dimension"]


def _on_some_path(dag: Dag) -> tuple[set[int], set[int]]:
    """The blocks and dag edges that lie on some ENTRY -> EXIT path."""
    forward = {dag.entry}
    for block in dag.topo_order:
        if block in forward:
            forward.update(dag.edges[e].dst for e in dag.out_edges[block])
    backward = {dag.exit}
    for block in reversed(dag.topo_order):
        if any(dag.edges[e].dst in backward for e in dag.out_edges[block]):
            backward.add(block)
    blocks = forward & backward
    edges = {eid for eid, edge in enumerate(dag.edges)
             if edge.src in blocks and edge.dst in blocks}
    return blocks, edges


def path_space_dimension(dag: Dag) -> int:
    """The dimension of the space spanned by the edge vectors of all ENTRY -> EXIT
    paths of ``dag``: ``E - N + 2`` over the edges and blocks on some such path.

    Parameters
    ----------
    dag : Dag

    Returns
    -------
    int
        0 when no path leads from ENTRY to EXIT; otherwise at least 1.

    Examples
    --------
    Two ``if`` statements one after the other: 4 paths, but any 3 of them
    span the fourth.

    >>> from pathprof.graph import Cfg, to_dag
    >>> g = Cfg(4, 0, 3, [(0, 1), (0, 1), (1, 2), (1, 2), (2, 3)])
    >>> path_space_dimension(to_dag(g))
    3

    Notes
    -----
    Add the edge EXIT -> ENTRY: the paths become cycles through it, and the space
    they span is that of the circulations, the cycle space of a connected graph of
    ``E + 1`` edges and ``N`` vertices: ``E + 1 - N + 1``. Every circulation of a
    DAG whose edges all lie on ENTRY -> EXIT paths is a combination of such paths
    (add a multiple of the sum of all paths to make it positive, then decompose
    the flow), so nothing smaller spans them. Blocks and edges on no ENTRY -> EXIT
    path are left out of the count.

    References
    ----------
    A. H. Watson and T. J. McCabe, "Structured Testing", NIST SP 500-235, 1996, §2.3.
    """
    blocks, edges = _on_some_path(dag)
    if dag.entry not in blocks:
        return 0
    return len(edges) - len(blocks) + 2


def _reduce(vector: dict[int, int], rows: dict[int, dict[int, int]]) -> dict[int, int]:
    """``vector`` less its components along ``rows`` (pivot -> row, the pivot being
    the row's smallest key), by fraction-free integer elimination."""
    for pivot in sorted(rows):
        factor = vector.get(pivot)
        if not factor:
            continue
        row = rows[pivot]
        scale = row[pivot]
        result = {k: v * scale for k, v in vector.items()}
        for k, v in row.items():
            value = result.get(k, 0) - factor * v
            if value:
                result[k] = value
            else:
                result.pop(k, None)
        vector = result
    return vector


class BasisBuilder:
    """Paths added one at a time, keeping a basis of the space they span.

    Invariant: :attr:`rank` is the rank, over the rationals, of the edge vectors of
    the paths added so far; it never exceeds :attr:`dimension`, and :attr:`full`
    says it has reached it (no further path can raise it).
    """

    def __init__(self, numbering: Numbering, dimension: int | None = None) -> None:
        self.numbering = numbering
        self.dimension = (path_space_dimension(numbering.dag) if dimension is None
                          else dimension)
        self._rows: dict[int, dict[int, int]] = {}

    @property
    def rank(self) -> int:
        return len(self._rows)

    @property
    def full(self) -> bool:
        return len(self._rows) >= self.dimension

    def spans(self, number: int) -> bool:
        """Whether path ``number`` lies in the space the paths added span (once
        :attr:`full`, every path does)."""
        if self.full:
            return True
        edges = regenerate(self.numbering, number).edges
        return not _reduce({eid: 1 for eid in edges}, self._rows)

    def add(self, number: int) -> bool:
        """Add path ``number`` (regenerated: Ball-Larus 1996, §3.4); whether it
        raised the rank."""
        if self.full:
            return False
        edges = regenerate(self.numbering, number).edges
        vector = _reduce({eid: 1 for eid in edges}, self._rows)
        if not vector:
            return False
        divisor = 0
        for value in vector.values():
            divisor = gcd(divisor, value)
        pivot = min(vector)
        if vector[pivot] < 0:
            divisor = -divisor
        self._rows[pivot] = {k: v // divisor for k, v in vector.items()}
        return True


def basis_rank(numbering: Numbering, numbers: Iterable[int], dimension: int | None = None
               ) -> int:
    """The rank, over the rationals, of the edge vectors of the paths ``numbers``.

    Each path number is regenerated (Ball-Larus 1996, §3.4) into its dag edges; the
    vectors are eliminated exactly (integers, no floating point). Work stops once
    the rank reaches ``dimension`` (default :func:`path_space_dimension`), which no
    set of paths can exceed.

    Examples
    --------
    >>> from pathprof.graph import Cfg, number_paths, to_dag
    >>> n = number_paths(to_dag(Cfg(4, 0, 3, [(0, 1), (0, 1), (1, 2), (1, 2), (2, 3)])))
    >>> basis_rank(n, [0, 3]), basis_rank(n, [0, 3, 1]), basis_rank(n, range(4))
    (2, 3, 3)
    """
    builder = BasisBuilder(numbering, dimension)
    for number in numbers:
        if builder.full:
            break
        builder.add(number)
    return builder.rank


def basis_coverage(fn: FunctionProfile, numbering: Numbering | None = None
                   ) -> tuple[int, int]:
    """``(covered, dimension)`` of one function: the rank of the complete paths that
    ran (paths cut short by an exception are left out) and the dimension of the
    space all its paths span."""
    numbering = numbering or numbering_of(fn.meta)
    dimension = path_space_dimension(numbering.dag)
    ran = sorted(number for number, count in fn.counts.items() if count)
    return basis_rank(numbering, ran, dimension), dimension
