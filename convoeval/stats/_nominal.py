"""Nominal agreement among any number of raters, from per-unit sums, so a bootstrap is one matrix product.

For unit ``i`` with ``r_i`` ratings of which ``n_ik`` fall in category ``k`` (Gwet 2014, ch. 2 and 5; Krippendorff
2011):

* observed agreement ``pa`` = mean over units with ``r_i >= 2`` of ``Σ_k n_ik (n_ik - 1) / (r_i (r_i - 1))``;
* category shares ``π_k`` = mean over units with ``r_i >= 1`` of ``n_ik / r_i``;
* Fleiss' kappa: chance ``pe = Σ π_k²``; Gwet's AC1: ``pe = Σ π_k (1 - π_k) / (q - 1)``;
  both ``(pa - pe)/(1 - pe)``
  (Gwet's form for missing ratings; on complete data it is Fleiss' 1971 kappa);
* Krippendorff's alpha (nominal): coincidences ``o_ck = Σ_i n_ic (n_ik - [c = k]) / (r_i - 1)`` over units with
  ``r_i >= 2``; ``alpha = 1 - (n - 1)(n - Σ o_cc) / (n² - Σ n_c²)`` with ``n_c = Σ_k o_ck`` and ``n = Σ n_c``.

Every quantity is a sum over units, so sums per conversation times bootstrap weights give every replicate at once.
"""

from __future__ import annotations

import numpy as np

#: Per-unit sums, in this order, flattened into one row per unit: agree, pairable, rated, shares (q), coincidences.
_FIXED = 3


def unit_counts(codes: np.ndarray, q: int) -> np.ndarray:
    """``(units, q)`` counts from a ``(units, raters)`` matrix of category codes 0..q-1 (NaN = missing)."""
    codes = np.asarray(codes, dtype=float)
    return np.stack([(codes == k).sum(axis=1) for k in range(q)], axis=1).astype(float)


def unit_sums(counts: np.ndarray) -> np.ndarray:
    """One row per unit: ``[agree, pairable, rated, share_1..q, coincidence_11..qq]``."""
    r = counts.sum(axis=1)
    pairable = r >= 2
    rated = r >= 1
    with np.errstate(invalid="ignore", divide="ignore"):
        agree = np.where(pairable, (counts * (counts - 1)).sum(axis=1) / (r * (r - 1)), 0.0)
        share = np.where(rated[:, None], counts / r[:, None], 0.0)
        outer = counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(counts.shape[1])[None]
        coinc = np.where(pairable[:, None, None], outer / (r - 1)[:, None, None], 0.0)
    return np.concatenate([agree[:, None], pairable[:, None], rated[:, None], share,
                           coinc.reshape(len(counts), -1)], axis=1)


def coefficients(sums: np.ndarray, q: int) -> dict[str, np.ndarray]:
    """Coefficients from summed unit rows; ``sums`` is ``(..., width)`` (e.g. one row per bootstrap replicate)."""
    sums = np.asarray(sums, dtype=float)
    agree, pairable, rated = sums[..., 0], sums[..., 1], sums[..., 2]
    share = sums[..., _FIXED:_FIXED + q]
    coinc = sums[..., _FIXED + q:].reshape(*sums.shape[:-1], q, q)
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = agree / pairable
        pi = share / rated[..., None]
        pe_fleiss = (pi**2).sum(axis=-1)
        pe_ac1 = (pi * (1 - pi)).sum(axis=-1) / (q - 1)
        n_c = coinc.sum(axis=-1)
        n = n_c.sum(axis=-1)
        diagonal = np.trace(coinc, axis1=-2, axis2=-1)
        alpha = 1 - (n - 1) * (n - diagonal) / (n**2 - (n_c**2).sum(axis=-1))
        return {
            "percent_agreement": pa,
            "fleiss_kappa": (pa - pe_fleiss) / (1 - pe_fleiss),
            "gwet_ac1": (pa - pe_ac1) / (1 - pe_ac1),
            "krippendorff_alpha": _undefined_as_nan(alpha, n),
        }


def _undefined_as_nan(alpha: np.ndarray, n: np.ndarray) -> np.ndarray:
    # Krippendorff's alpha needs at least two pairable values; 0/0 already gives NaN, infinities do not.
    out = np.where(n >= 2, alpha, np.nan)
    return np.where(np.isfinite(out), out, np.nan)
