"""How every estimator of ``convoeval.stats`` makes its interval: one settings object, ``Estimation``.

Every statistic that reports an interval takes ``estimation=Estimation(...)`` — the bootstrap's replicates, the
confidence level, the seed, the kind of interval and the resampling unit — instead of repeating ``n_boot, level,
seed`` in each signature. The old keyword arguments still work for one release: ``n_boot=``, ``level=`` and ``seed=``
given to an estimator warn (``FutureWarning``) and are read into its ``Estimation``.

Example:
    >>> Estimation().n_boot, Estimation().level, Estimation().interval
    (1000, 0.95, 'auto')
    >>> Estimation(n_boot=200, seed=3).replace(level=0.9).level
    0.9
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Literal, TypedDict

__all__ = ["DEFAULT", "Estimation", "EstimationAliases", "IntervalKind", "LevelAlias", "estimation_from"]

IntervalKind = Literal["auto", "bca", "jackknife", "percentile"]
_KINDS = ("auto", "bca", "jackknife", "percentile")


@dataclass(frozen=True)
class Estimation:
    """The settings every interval in ``convoeval.stats`` is made with.

    Attributes:
        n_boot: Bootstrap replicates (B).
        level: Confidence level of every interval (0.95: 95%).
        seed: Seed of the bootstrap draws (and of the isotonic folds): the same seed, the same interval.
        interval: ``"auto"`` (the default): each statistic's interval that holds its level at 30 conversations
            (benchmarks/RESULTS.md): the jackknife on Fisher's z with Student t for the 0–10 score statistics
            (ICCs, alphas, weighted kappas, rank correlations; plain jackknife t for biases and MAE), BCa (the
            bias-corrected and accelerated bootstrap, Efron 1987) for the rest; or one kind for all: ``"bca"``,
            ``"jackknife"``, ``"percentile"`` (the plain percentile bootstrap, convoeval's interval before).
            Estimators with an interval of their own (the calibrated estimators' Student t) ignore it.
        cluster: The column whose values are resampled whole; None is each function's own unit (conversations,
            ``run_id``; scenarios for the trial-level statistics). Agreement tables accept any column constant
            within a conversation (``"scenario"``: resample scenarios, when conversations of one are alike).
    """

    n_boot: int = 1000
    level: float = 0.95
    seed: int = 0
    interval: IntervalKind = "auto"
    cluster: str | None = None

    def __post_init__(self) -> None:
        if int(self.n_boot) != self.n_boot or self.n_boot < 1:
            raise ValueError(f"Estimation.n_boot must be a whole number of at least 1, got {self.n_boot!r}")
        if not 0 < self.level < 1:
            raise ValueError(f"Estimation.level must be between 0 and 1, got {self.level!r}")
        if self.interval not in _KINDS:
            raise ValueError(f"Estimation.interval must be one of {list(_KINDS)}, got {self.interval!r}")

    def replace(self, **changes: object) -> Estimation:
        """A copy with some settings changed."""
        return replace(self, **changes)  # type: ignore[arg-type]

    def unit(self, default: str = "run_id") -> str:
        """The resampling column: ``cluster``, or the function's own ``default``."""
        return self.cluster or default


#: The settings used when none are given.
DEFAULT = Estimation()


class EstimationAliases(TypedDict, total=False):
    """The keyword arguments ``Estimation`` replaced, accepted for one release with a ``FutureWarning``."""

    n_boot: int
    level: float
    seed: int


class LevelAlias(TypedDict, total=False):
    """The one keyword argument ``Estimation`` replaced in estimators with their own interval (``level``)."""

    level: float


def estimation_from(estimation: Estimation | None, aliases: Mapping[str, object], where: str) -> Estimation:
    """The ``Estimation`` a call asked for: ``estimation``, with any deprecated ``n_boot``/``level``/``seed`` read in.

    Args:
        estimation: The settings given (None: the defaults).
        aliases: The deprecated keyword arguments the call received (``**kwargs`` of the estimator).
        where: The estimator's name, for the messages.

    Raises:
        TypeError: a keyword that is neither ``estimation`` nor one of the deprecated aliases.

    Example:
        >>> import warnings
        >>> with warnings.catch_warnings(record=True) as caught:
        ...     warnings.simplefilter("always")
        ...     estimation_from(None, {"n_boot": 50}, "f").n_boot, caught[0].category.__name__
        (50, 'FutureWarning')
    """
    base = estimation if estimation is not None else DEFAULT
    if not aliases:
        return base
    unknown = sorted(set(aliases) - set(EstimationAliases.__annotations__))
    if unknown:
        raise TypeError(f"{where}() got unexpected keyword argument(s) {unknown}")
    given = ", ".join(f"{k}={v!r}" for k, v in aliases.items())
    warnings.warn(f"{where}({given}) is deprecated: pass estimation=Estimation({given}) "
                  "(convoeval.stats.Estimation); the keyword arguments go in the next release",
                  FutureWarning, stacklevel=3)
    return base.replace(**dict(aliases))
