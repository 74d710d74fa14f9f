"""Bias probes for the judges: does a verdict move when something that should not matter changes?

Each probe judges the same conversations twice — as they are (``before``) and perturbed (``after``) — with the
same judge, samples and seeds, and reports the effect (after − before) with a conversation-bootstrap CI and a paired
test (McNemar for pass/fail, Wilcoxon for scores). See ``docs/probes.md``.

Example (calls the judge model, so not run as a doctest)::

    from convoeval.agreement.probes import run_probes
    from convoeval.stats import plot_probe_effects
    result = run_probes(transcripts, scenarios=scenarios)
    result.effects
    plot_probe_effects(result.effects)
"""

from convoeval.agreement.probes.perturb import (
    INJECTIONS,
    LANGUAGES,
    PADDING,
    conversation_locales,
    inject,
    pad_verbosity,
    shuffle_criteria,
)
from convoeval.agreement.probes.run import PROBES, ProbeResult, arun_probes, run_probes
from convoeval.agreement.probes.translate import atranslate_transcripts, translate_transcripts

__all__ = [
    "INJECTIONS", "LANGUAGES", "PADDING", "PROBES", "ProbeResult", "arun_probes", "atranslate_transcripts",
    "conversation_locales", "inject", "pad_verbosity", "run_probes", "shuffle_criteria", "translate_transcripts",
]
