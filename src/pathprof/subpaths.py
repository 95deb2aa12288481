"""The hottest subpaths of a running program, estimated online (Oren 2002, OSP).

``pathprof hot script.py`` uses :class:`SubpathSampling`; from inside a program
measured that way, :func:`snapshot` gives the estimates so far. A subpath is any
run of consecutive blocks of one stream (a thread, or a generator's or coroutine's
frame), starting anywhere and crossing calls; see
:mod:`pathprof.measure.subpaths` for the stream and
:mod:`pathprof.runtime.subpaths` for the sampler.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from pathprof.exceptions import ConfigError
from pathprof.measure.measuring import Measuring

if TYPE_CHECKING:
    from pathprof.measure.subpath_streams import Moment

__all__ = ["ENCODINGS", "LENGTHS", "HotSubpath", "SubpathSampling", "snapshot"]

ENCODINGS = ("exact", "rotation")
#: With ``costs="statements"``: a block costs the statements and tests it runs, from 1
#: to this many (more count as this many); a subpath is kept with probability its
#: mean block cost / HIGHEST_COST (Oren §5.1.2).
HIGHEST_COST = 8
#: length distributions: ``all`` (every start samples every power of two up to the
#: longest: nested prefixes of one window; the default), ``geometric`` (one length
#: per start, 2^n with probability 2^-n, Oren's), ``uniform`` (one length per start,
#: each power of two alike)
LENGTHS = ("all", "geometric", "uniform")

#: What the reports say when no subpath was sampled.
NOTHING_SAMPLED = ("No subpath was sampled: the run was shorter than one sampling period, "
                   "or no selected code ran (see --period, --source).")

#: The period chosen from the run (``period=None``, ``pathprof hot``'s default): one
#: start per FIRST_PERIOD blocks at first; once the run reaches STARTS_KEPT periods
#: of blocks the period grows by a quarter (the sample thinned to it), so that about
#: STARTS_KEPT starts are kept, up to LONGEST_PERIOD (the fixed default before, where
#: long runs stay); the budget may make it grow sooner.
FIRST_PERIOD = 200.0
STARTS_KEPT = 300
LONGEST_PERIOD = 10_000.0


class SubpathBlockJson(TypedDict):
    """A block of a subpath in JSON (:meth:`HotSubpath.to_json`)."""

    file: str
    function: str
    first_line: int | None
    last_line: int | None
    function_line: int


class SubpathCycleJson(TypedDict):
    """The cycle a subpath repeats, in JSON."""

    turns: float
    turn_length: int | None
    other_repetitions: int


class SubpathJson(TypedDict):
    """One subpath's estimate in JSON (:meth:`HotSubpath.to_json`)."""

    rank: int
    length: int
    sampled: int
    estimate: float
    relative_error: float
    low: float
    high: float | None
    blocks: list[SubpathBlockJson]
    exact: NotRequired[int]
    mean_cost: NotRequired[float]
    cycle: NotRequired[SubpathCycleJson]


class SamplingSummary(TypedDict):
    """What the sampler did (:meth:`SubpathSampling.summary`)."""

    positions: int
    period: float
    initial_period: float
    period_from_run: bool
    grown: int
    distinct_sampled: int
    sample_bytes: int
    sampled: int
    budget: int
    resamplings: int
    failures: int
    overshot: int
    moments: NotRequired[list[Moment]]


class SubpathsDocument(SamplingSummary):
    """What ``pathprof hot --json`` writes: the summary, the settings and the subpaths
    (format 1)."""

    format: int
    confidence: float
    one_sided: bool
    rank: str
    encoding: str
    costs: str | None
    subpaths: list[SubpathJson]


def period_text(summary: SamplingSummary) -> str:
    """Which period was used, in words: ``one start per 3,125 blocks (chosen from the
    run: from 100, grown 15 times as it went on; 0 resamplings for the budget)``."""
    text = f"one start per {summary['period']:,.0f} blocks"
    resamplings = summary["resamplings"]
    budget = (f"{resamplings:,} resampling{'' if resamplings == 1 else 's'} for the "
              "budget")
    if summary.get("period_from_run"):
        grown = summary.get("grown", 0)
        return (f"{text} (chosen from the run: from {summary['initial_period']:,.0f}, grown "
                f"{grown:,} time{'' if grown == 1 else 's'} as it went on, and {budget})")
    return f"{text} (--period {summary.get('initial_period', summary['period']):,.0f}; {budget})"


def bound_text(error: float) -> str:
    """A relative error bound as the reports show it: ``42.4%``, or ``≥100%``."""
    return "≥100%" if error >= 1 else f"{error:.1%}"


@dataclass(frozen=True)
class HotSubpath:
    """One subpath's estimate, with the source it runs."""

    rank: int
    blocks: tuple[Hashable, ...]
    #: per block: (file, qualified name, first source line, last source line, the
    #: function's first line)
    places: tuple[tuple[str, str, int | None, int | None, int], ...]
    sampled: int
    estimate: float
    error: float  #: the thesis's relative error at the confidence
    low: float
    high: float
    exact: int | None = None  #: with ``--exact``: the subpath's count
    cost: float | None = None  #: with ``costs``: the mean cost of its blocks
    #: a repetition of a shorter cycle: how many turns (None: not one), and how many
    #: other repetitions of that cycle this row stands for
    turns: float | None = None
    folded: int = 0

    @property
    def turn_length(self) -> int | None:
        """Blocks in one turn of the cycle this subpath repeats (None: not a cycle)."""
        return None if self.turns is None else round(len(self.blocks) / self.turns)

    def to_json(self) -> SubpathJson:
        found: SubpathJson = {
            "rank": self.rank, "length": len(self.blocks), "sampled": self.sampled,
            "estimate": round(self.estimate, 3), "relative_error": round(self.error, 6),
            "low": round(self.low, 3),
            "high": None if self.high == float("inf") else round(self.high, 3),
            "blocks": [{"file": f, "function": q, "first_line": a, "last_line": b,
                        "function_line": line} for f, q, a, b, line in self.places]}
        if self.exact is not None:
            found["exact"] = self.exact
        if self.cost is not None:
            found["mean_cost"] = round(self.cost, 6)
        if self.turns is not None:
            found["cycle"] = {"turns": round(self.turns, 3), "turn_length": self.turn_length,
                              "other_repetitions": self.folded}
        return found


class SubpathSampling(Measuring):
    """Instrument the selected modules imported while started for subpath sampling.
    Selection works as for :class:`pathprof.Profiler`. ``period``: one stream
    position in ``period`` starts a sample at first (it grows as the sample fills
    ``budget`` distinct subpaths); None (the default): chosen from the run, from
    :data:`FIRST_PERIOD` growing with the run's length up to :data:`LONGEST_PERIOD`
    (see the constants); ``longest``: sample lengths 2..2^longest;
    ``exact`` also counts every subpath (slow: for evaluation), and then with
    ``checkpoint_every`` N, every N blocks, notes the exact top 5's ranks among
    the estimates (:attr:`~pathprof.measure.subpaths.SubpathProfiler.moments`).
    ``costs="statements"`` weighs blocks by the statements they run (§5.1.2): costly
    subpaths are sampled more, and ``rank="cost"`` ranks by count x mean cost."""

    def __init__(self, *, source: Sequence[str] = (), include: Sequence[str] = (),
                 omit: Sequence[str] = (), default_dirs: Sequence[str] | None = None,
                 period: float | None = None, budget: int = 10_000, longest: int = 5,
                 lengths: str = "all", encoding: str = "exact", seed: int | None = None,
                 exact: bool = False, cache: bool = True, checkpoint_every: int = 0,
                 costs: str | None = None, cache_dir: str | None = None) -> None:
        from pathprof.config import cache_dir as find_cache_dir
        from pathprof.measure.importhook import InstrumentOptions
        from pathprof.measure.subpaths import SubpathProfiler
        from pathprof.runtime.subpaths import LengthDistribution, SubpathSampler

        if encoding not in ENCODINGS:
            raise ConfigError(f"encoding must be one of {', '.join(ENCODINGS)}, "
                              f"not {encoding!r}")
        if lengths not in LENGTHS:
            raise ConfigError(f"lengths must be one of {', '.join(LENGTHS)}, not {lengths!r}")
        if not 1 <= longest <= 16:
            raise ConfigError("the longest sample is 2^N blocks with N from 1 to 16")
        distribution = {
            "all": LengthDistribution.powers,
            "geometric": LengthDistribution.geometric,
            "uniform": lambda n: LengthDistribution.uniform([2 ** k for k in range(1, n + 1)]),
        }[lengths](longest)
        if costs not in (None, "statements"):
            raise ConfigError(f"costs must be 'statements', not {costs!r}")
        try:
            sampler = SubpathSampler(period=FIRST_PERIOD if period is None else period,
                                     budget=budget, lengths=distribution,
                                     encoding=encoding, seed=seed,
                                     costs={} if costs else None,
                                     highest_cost=HIGHEST_COST if costs else None,
                                     starts=STARTS_KEPT if period is None else None,
                                     ceiling=LONGEST_PERIOD if period is None else None)
        except ValueError as err:
            raise ConfigError(str(err)) from err
        self.profiler = SubpathProfiler(sampler, exact=exact,
                                        checkpoint_every=checkpoint_every)
        super().__init__(InstrumentOptions(mode="path", cache=cache, subpaths=True,
                                           cache_dir=find_cache_dir(cache_dir)),
                         source=source, include=include, omit=omit, default_dirs=default_dirs)

    def start(self) -> SubpathSampling:
        self.install_hook("sampling", "sampled")
        self.profiler.start()
        return self

    def stop(self) -> None:
        self.profiler.stop()
        self.hook.uninstall()

    def hottest(self, *, top: int | None = 10, confidence: float = 0.95,
                one_sided: bool = False, rank: str = "count",
                threshold: float | None = None, fold: bool = True) -> list[HotSubpath]:
        """The hottest subpaths so far, ranked by their lower bounds; with ``fold``,
        each cycle once (:func:`pathprof.analysis.subpaths.fold_cycles`)."""
        return _hottest(self.profiler, top=top, confidence=confidence, one_sided=one_sided,
                        rank=rank, threshold=threshold, fold=fold)

    def summary(self) -> SamplingSummary:
        """What the sampler did: positions seen, period, sample size, resamplings."""
        sampler = self.profiler.sampler
        # (the ignore: mypy does not follow ``moments`` spread in when there are some)
        return {"positions": sampler.positions, "period": sampler.period,
                "initial_period": sampler.initial_period,
                "period_from_run": sampler.starts is not None, "grown": sampler.grown,
                "distinct_sampled": len(sampler.counts), "sample_bytes": sampler.sample_bytes(),
                "sampled": sum(sampler.counts.values()), "budget": sampler.budget,
                "resamplings": sampler.resamplings, "failures": self.profiler.failures,
                "overshot": self.profiler.overshot,
                **({"moments": self.profiler.moments} if self.profiler.moments else {})}  # type: ignore[typeddict-item]


# profiler: the SubpathProfiler (pathprof.measure.subpaths), which the runtime holds
# as its Sampler protocol (:func:`snapshot`), which has none of what is read here
def _hottest(profiler: Any, *, top: int | None, confidence: float, one_sided: bool,
             rank: str, threshold: float | None, fold: bool = True) -> list[HotSubpath]:
    from pathprof.analysis.subpaths import estimate_subpaths, fold_cycles

    with profiler.sampler._lock:
        snap = profiler.sampler.snapshot()
    exact = profiler.exact.counts if profiler.exact is not None else None
    found = []
    ranked = estimate_subpaths(snap, confidence=confidence, one_sided=one_sided, rank=rank,
                               top=None if fold else top, threshold=threshold)
    if fold:
        ranked = fold_cycles(ranked)[:top] if top is not None else fold_cycles(ranked)
    for number, estimate in enumerate(ranked, start=1):
        places = []
        for ident in estimate.blocks:
            info = profiler.blocks[ident]
            first, last = info.lines if info.lines is not None else (None, None)
            places.append((info.file, info.qualname, first, last, info.function_line))
        costs = profiler.sampler.costs
        cost = (sum(costs.get(b, 0.0) for b in estimate.blocks) / len(estimate.blocks)
                if costs is not None else None)
        found.append(HotSubpath(number, estimate.blocks, tuple(places), estimate.sampled,
                                estimate.estimate, estimate.error, estimate.low,
                                estimate.high,
                                exact.get(estimate.blocks, 0) if exact is not None else None,
                                cost, estimate.turns, estimate.folded))
    return found


def snapshot(*, top: int | None = 10, confidence: float = 0.95, one_sided: bool = False,
             rank: str = "count", fold: bool = True) -> list[HotSubpath]:
    """The hottest subpaths so far, from inside a program run by ``pathprof hot``
    (empty when no sampling runs); ``fold`` as for :meth:`SubpathSampling.hottest`."""
    from pathprof import runtime

    profiler = runtime.subpath_sampler
    if profiler is None:
        return []
    return _hottest(profiler, top=top, confidence=confidence, one_sided=one_sided, rank=rank,
                    threshold=None, fold=fold)
