"""The forest plot of the probes' effects: one panel per judge, one line per probe, the effect with its CI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from convoeval.stats._result import ALL

_PANELS = {
    "rubric": ("rubric judge", "pass-rate difference, after − before"),
    "holistic": ("holistic judge", "score difference (points), after − before"),
}
_BLUE, _GREY = "#0969da", "#8c959f"


def plot_probe_effects(effects: pd.DataFrame, *, items: Sequence[str] = (ALL,), title: str | None = None) -> Any:
    """A forest plot of each probe's effect with its CI, one panel per instrument (their scales differ).

    A filled dot is a CI that can be read; a hollow grey dot is flagged ``ci_too_wide`` (too few conversations or
    too wide to conclude). The dashed line is "no effect". Each line is labelled with ``n`` (conversations) and the
    paired test's p-value.

    Args:
        effects: The effects table (``ProbeResult.effects`` or ``probe_effects(pairs)``).
        items: Which items to draw (default the pooled ``"(all)"`` rows; pass dimension names or criteria to see
            them).
        title: The figure's title.

    Returns:
        A ``matplotlib.figure.Figure`` (object API, no pyplot state; notebooks display it).

    Example (needs a probe study's effects, so not run as a doctest)::

        fig = plot_probe_effects(result.effects)
        fig.savefig("probes.png")
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - matplotlib loads on first plot, not at start-up

    missing = [c for c in ("probe", "instrument", "item", "effect", "ci_low", "ci_high") if c not in effects]
    if missing:
        raise ValueError(f"effects table lacks column(s) {missing}; pass ProbeResult.effects or probe_effects(...)")
    rows = effects[effects["item"].isin(list(items))]
    instruments = [i for i in _PANELS if i in set(rows["instrument"])]
    if not instruments:
        fig = Figure(figsize=(6, 1.2), layout="constrained")
        fig.text(0.5, 0.5, "No probe effect to plot.", ha="center", va="center", style="italic", color=_GREY)
        return fig
    height = 1.3 + 0.4 * max(int((rows["instrument"] == i).sum()) for i in instruments)
    fig = Figure(figsize=(5.5 * len(instruments), height), layout="constrained")
    axes = fig.subplots(1, len(instruments), squeeze=False)[0]
    for ax, instrument in zip(axes, instruments, strict=True):
        _panel(ax, rows[rows["instrument"] == instrument], instrument, several=len(items) > 1)
    fig.suptitle(title or "Bias probes: effect with 95% CI (hollow grey: CI too wide to conclude)", fontsize=10)
    return fig


def _panel(ax: Any, rows: pd.DataFrame, instrument: str, *, several: bool) -> None:
    name, xlabel = _PANELS[instrument]
    labels = [f"{r.probe} · {r.item}" if several else str(r.probe) for r in rows.itertuples()]
    for y, r in enumerate(rows.itertuples()):
        wide = bool(getattr(r, "ci_too_wide", False))
        color = _GREY if wide else _BLUE
        effect = r.effect
        if pd.isna(effect):
            ax.text(0, y, "no valid pair", va="center", ha="center", fontsize=8, color=_GREY)
            continue
        low = effect - r.ci_low if np.isfinite(r.ci_low) else 0.0
        high = r.ci_high - effect if np.isfinite(r.ci_high) else 0.0
        ax.errorbar([effect], [y], xerr=[[max(low, 0.0)], [max(high, 0.0)]], fmt="o", color=color,
                    markerfacecolor="white" if wide else color, capsize=3, linewidth=1.2)
        p = getattr(r, "p_value", float("nan"))
        note = f"n={r.n}" + (f", p={p:.2g}" if pd.notna(p) else "")
        ax.annotate(note, (1.0, y), xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, color=_GREY)
    ax.axvline(0, color="#57606a", linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlabel(xlabel, fontsize=8)
    ax.set_title(name, fontsize=9, loc="left")
    ax.tick_params(axis="x", labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
