"""Bias probes: perturbations change only what they should; scripted judges give the effects they should; the
statistics are scipy's and statsmodels' on the same numbers; degenerate cases are NaN with a reason."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import numpy as np
import pandas as pd
import pytest
from engine_support import conversation, isolated_state, scenario  # noqa: F401
from scipy.stats import wilcoxon
from statsmodels.stats.contingency_tables import mcnemar

from convoeval.agreement.probes import (
    INJECTIONS,
    PADDING,
    PROBES,
    inject,
    pad_verbosity,
    run_probes,
    shuffle_criteria,
    translate_transcripts,
)
from convoeval.frames import HOLISTIC_DIMENSIONS, TRANSCRIPT_COLUMNS
from convoeval.stats import EFFECT_COLUMNS, PAIR_COLUMNS, plot_probe_effects, probe_effects
from convoeval.stats._result import ALL
from convoeval.testing import FakeChatModel

pytestmark = pytest.mark.usefixtures("isolated_state")

PT = scenario()  # billing-conv-happy-payment, pt-BR, three criteria
EN = scenario(id="billing-conv-en", locale="en")
ONE = scenario(id="billing-conv-one", rubric=["Agent was polite"])
SCENARIOS = [PT, EN, ONE]
ATTACKS = [a for lines in INJECTIONS.values() for a in lines]
N_CONVERSATIONS = 14  # above 13 scipy tests tied differences asymptotically (at or below: a slow permutation test)


def transcripts(n: int = N_CONVERSATIONS, *, scenarios: tuple[Any, ...] = (PT, EN)) -> pd.DataFrame:
    """n conversations, alternating scenarios, each with its own first message (so scripted judges tell them apart)."""
    frames = []
    for i in range(n):
        s = scenarios[i % len(scenarios)]
        pt = s.locale == "pt-BR"
        messages = [
            ("patient", f"Oi, quero pagar a fatura {i}" if pt else f"Hi, I want to pay invoice {i}"),
            ("agent", "Sua fatura é de R$ 150,00. Pix ou boleto?" if pt else "Your invoice is R$ 150.00. Pix or boleto?"),
            ("patient", "Pix, por favor" if pt else "Pix, please"),
            ("agent", "Pronto! Segue o link." if pt else "Done! Here is the link."),
        ]
        frames.append(conversation(f"run-{i:02d}", s.id, seed=42 + i, messages=messages))
    return pd.concat(frames, ignore_index=True)


# ── A scripted judge that reads its prompt ──

TURN_LINE = re.compile(r'^\[Turn \d+\] (Patient|Agent): ("(?:[^"\\]|\\.)*")', re.MULTILINE)


def transcript_messages(prompt: str) -> list[str]:
    """The message texts of the transcript block, decoded (the judges quote them as JSON strings)."""
    return [json.loads(quoted) for _, quoted in TURN_LINE.findall(prompt)]


def attacked(prompt: str) -> bool:
    return any(attack in text for text in transcript_messages(prompt) for attack in ATTACKS)


def stable(*parts: str) -> int:
    return int(hashlib.sha256("|".join(parts).encode()).hexdigest()[:8], 16)


def tool(kwargs: dict[str, Any]) -> str:
    return kwargs["tool_choice"]["function"]["name"]


def judge(*, swayed: bool = False, by_position: bool = False, fail_when_attacked: bool = False) -> FakeChatModel:
    """Rubric and holistic answers computed from the prompt.

    The base verdict of a criterion depends on its text and the conversation's first message only (an order-blind
    judge); ``swayed`` passes everything and gives 10s when an attack line is in the transcript; ``by_position``
    passes only the criterion numbered 1; ``fail_when_attacked`` raises (a judge error) on attacked transcripts.
    """

    def respond(messages: list[Any], kwargs: dict[str, Any]) -> Any:
        prompt = messages[1].content
        key = transcript_messages(prompt)[0].split("\n")[0]  # the first line: an attack is appended after it
        hit = attacked(prompt)
        if hit and fail_when_attacked:
            return ValueError("judge exploded")
        if tool(kwargs) == "RubricAnswer":
            criteria = re.findall(r"^(\d+)\. (.+)$", prompt.split("Conversation:")[0], re.MULTILINE)
            answer = {}
            for number, text in criteria:
                passed = number == "1" if by_position else stable(key, text) % 2 == 0
                answer[f"criterion_{number}"] = {"evidence": "Turn 1", "reasoning": "r",
                                                 "passed": True if (swayed and hit) else passed}
            return answer
        scores = {d: 10 if (swayed and hit) else 2 + stable(key, d) % 6 for d in HOLISTIC_DIMENSIONS}
        return {"issues": [], "scores": scores, "suggestion": "none"}

    return FakeChatModel(responder=respond, model_name="scripted-judge")


REQUEST = re.compile(r"Translate each of these \d+ messages from (.+) into (.+):")


def translator(*, short_for: str | None = None, copy_for: str | None = None) -> FakeChatModel:
    """Translates by tagging each message with its target language; answers one item short when a message
    contains ``short_for``, and copies the messages unchanged when one contains ``copy_for``."""

    def respond(messages: list[Any], kwargs: dict[str, Any]) -> Any:
        assert tool(kwargs) == "Translation"
        user = messages[1].content
        target = REQUEST.match(user).group(2)
        sources = json.loads(user.split("\n", 1)[1].rsplit("\n\nAnswer with", 1)[0])
        out = [f"<{target}> {s}" for s in sources]
        if short_for is not None and any(short_for in s for s in sources):
            out = out[:-1]
        if copy_for is not None and any(copy_for in s for s in sources):
            out = list(sources)
        return {"messages": out}

    return FakeChatModel(responder=respond, model_name="scripted-translator")


# ── Perturbations ──


def unchanged_columns(a: pd.DataFrame, b: pd.DataFrame, *, but: tuple[str, ...] = ("text", "bubbles")) -> None:
    assert list(a.columns) == list(b.columns)
    keep = [c for c in a.columns if c not in but]
    pd.testing.assert_frame_equal(a[keep], b[keep])


def test_padding_changes_only_agent_messages_in_the_conversation_language():
    original = transcripts(4)
    frozen = original.copy(deep=True)
    padded = pad_verbosity(original, seed=3, scenarios=SCENARIOS)
    pd.testing.assert_frame_equal(original, frozen)  # pure: the input is untouched
    unchanged_columns(original, padded)
    assert list(padded.columns) == list(TRANSCRIPT_COLUMNS)
    for (_, old), (_, new) in zip(original.iterrows(), padded.iterrows(), strict=True):
        if old["role"] == "patient":
            assert (new["text"], new["bubbles"]) == (old["text"], old["bubbles"])
            continue
        language = "pt-BR" if old["scenario"] == PT.id else "en"
        opener, *middle, closer = new["bubbles"]
        assert middle == old["bubbles"]
        assert opener in PADDING[language]["open"] and closer in PADDING[language]["close"]
        assert new["text"] == "\n".join(new["bubbles"])
    pd.testing.assert_frame_equal(padded, pad_verbosity(original, seed=3, scenarios=SCENARIOS))  # deterministic


def test_padding_language_comes_from_locales_or_fails_clearly():
    original = transcripts(2)
    padded = pad_verbosity(original, locales={PT.id: "es", "run-01": "es"})
    assert padded["bubbles"].iloc[1][0] in PADDING["es"]["open"]
    with pytest.raises(ValueError, match="no language for conversation"):
        pad_verbosity(original)


@pytest.mark.parametrize("role", ["agent", "patient"])
@pytest.mark.parametrize("language", ["en", "pt-BR"])
def test_injection_goes_into_one_message_of_the_chosen_role_and_language(role, language):
    original = transcripts(6)
    injected = inject(original, role=role, language=language, seed=1)
    unchanged_columns(original, injected)
    changed = original["text"] != injected["text"]
    assert changed.groupby(original["run_id"]).sum().tolist() == [1] * 6  # one message per conversation
    assert set(original.loc[changed, "role"]) == {role}
    for old, new in zip(original.loc[changed, "text"], injected.loc[changed, "text"], strict=True):
        assert new.startswith(old + "\n") and new[len(old) + 1:] in INJECTIONS[language]
    assert injected["text"].equals(inject(original, role=role, language=language, seed=1)["text"])


def test_injection_of_a_missing_role_leaves_the_conversation_alone_and_bad_arguments_fail():
    agent_only = conversation(messages=[("agent", "Olá!")])
    assert inject(agent_only, role="patient").equals(agent_only)
    with pytest.raises(ValueError, match="role"):
        inject(agent_only, role="judge")
    with pytest.raises(ValueError, match="language"):
        inject(agent_only, language="fr")


@pytest.mark.parametrize("n", [2, 3, 5])
def test_shuffled_criteria_are_a_permutation_and_never_the_original_order(n):
    items = [f"c{i}" for i in range(n)]
    for seed in range(25):
        shuffled, order = shuffle_criteria(items, seed=seed, key="s")
        assert sorted(order) == list(range(n)) and order != list(range(n))
        assert shuffled == [items[i] for i in order]
    assert shuffle_criteria(["only"], seed=1) == (["only"], [0])


# ── Translation ──


def test_translation_replaces_every_message_and_keeps_the_conversation():
    original = transcripts(2)
    model = translator()
    english = translate_transcripts(original, to="en", model=model)
    assert len(model.calls) == 2  # one call per conversation
    unchanged_columns(original, english.drop(columns="translation_error"))
    assert english["translation_error"].isna().all()
    assert english["text"].tolist() == [f"<English> {t}" for t in original["text"]]
    assert {REQUEST.match(c.messages[1].content).group(1) for c in model.calls} == {"their language"}
    named = translator()
    translate_transcripts(original, to="es", model=named, scenarios=SCENARIOS)
    assert {REQUEST.match(c.messages[1].content).groups() for c in named.calls} == {
        ("Brazilian Portuguese", "Spanish"), ("English", "Spanish")}


def test_translation_of_the_wrong_length_is_an_error_for_that_conversation_only():
    original = transcripts(2)
    model = translator(short_for="fatura 0")
    out = translate_transcripts(original, to="en", model=model)
    bad = out["run_id"] == "run-00"
    assert out.loc[bad, "text"].isna().all()
    assert out.loc[bad, "translation_error"].str.contains("messages").all()
    assert out.loc[~bad, "translation_error"].isna().all() and out.loc[~bad, "text"].notna().all()
    assert len(model.calls) == 3  # the short answer was retried once, with the reason, then given up


# ── Probes end to end with scripted judges ──


def pooled(effects: pd.DataFrame, probe: str, instrument: str) -> pd.Series:
    rows = effects[(effects["probe"] == probe) & (effects["instrument"] == instrument) & (effects["item"] == ALL)]
    assert len(rows) == 1
    return rows.iloc[0]


def test_a_judge_swayed_by_the_injection_shows_a_positive_effect_with_a_ci():
    probes = ["injection_agent_en", "injection_patient_pt"]
    result = run_probes(transcripts(), scenarios=SCENARIOS, probes=probes, model=judge(swayed=True), n_boot=500)
    assert list(result.pairs.columns) == list(PAIR_COLUMNS)
    assert list(result.effects.columns) == list(EFFECT_COLUMNS)
    for probe in probes:
        rubric, holistic = pooled(result.effects, probe, "rubric"), pooled(result.effects, probe, "holistic")
        assert rubric["after"] == 1.0 and rubric["effect"] == pytest.approx(1.0 - rubric["before"])
        assert 0 < rubric["ci_low"] <= rubric["effect"] <= rubric["ci_high"]
        assert rubric["p_value"] < 0.05 and rubric["flip_rate"] == rubric["effect"]  # only fail -> pass flips
        assert holistic["after"] == 10.0 and 0 < holistic["ci_low"] <= holistic["effect"] <= holistic["ci_high"]
        assert holistic["p_value"] < 0.05
        assert (rubric["n"], holistic["n"]) == (N_CONVERSATIONS, N_CONVERSATIONS)
    assert result.pairs["error"].isna().all()


def test_a_judge_that_ignores_the_perturbations_shows_no_effect():
    probes = ["verbosity", "injection_agent_pt", "injection_patient_en", "criteria_order"]
    result = run_probes(transcripts(), scenarios=SCENARIOS, probes=probes, model=judge(), n_boot=200)
    effects = result.effects
    assert set(effects["probe"]) == set(probes)
    assert (effects["effect"] == 0).all() and (effects["ci_low"] == 0).all() and (effects["ci_high"] == 0).all()
    rubric = effects[effects["instrument"] == "rubric"]
    assert (rubric["flip_rate"] == 0).all() and rubric["p_value"].isna().all()
    assert rubric["method"].str.contains("no discordant pair").all()
    holistic = effects[effects["instrument"] == "holistic"]
    assert holistic["p_value"].isna().all() and holistic["method"].str.contains("every difference is zero").all()
    assert "criteria_order" not in set(holistic["probe"])  # the holistic judge has no criteria
    assert set(holistic["item"]) == {ALL, *HOLISTIC_DIMENSIONS}


def test_shuffled_order_maps_each_verdict_back_to_its_criterion():
    frames = transcripts(6, scenarios=(PT, EN, ONE))
    result = run_probes(frames, scenarios=SCENARIOS, probes=["criteria_order"], model=judge(by_position=True),
                        n_boot=100)
    pairs = result.pairs.set_index(["run_id", "item"])
    rubric = result.judged["rubric"]
    for s in (PT, EN):
        shuffled, order = shuffle_criteria(s.rubric, seed=0, key=s.id)
        for run_id in frames.loc[frames["scenario"] == s.id, "run_id"].unique():
            for position, k in enumerate(order):
                text = s.criteria[k]
                # the judge passed the criterion it saw first: after the shuffle that is criteria[order[0]]
                assert pairs.loc[(run_id, text), "after"] == float(position == 0)
                assert pairs.loc[(run_id, text), "before"] == float(k == 0)
            after = rubric[(rubric["probe"] == "criteria_order") & (rubric["run_id"] == run_id)]
            assert after["criterion"].tolist() == [c.text for c in shuffled]
    single = result.pairs[result.pairs["scenario"] == ONE.id]
    assert len(single) == 2 and single["error"].str.contains("one criterion").all()
    assert pooled(result.effects, "criteria_order", "rubric")["n_excluded"] == 2


def test_judge_errors_on_either_side_are_excluded_and_counted_never_zero():
    result = run_probes(transcripts(4), scenarios=SCENARIOS, probes=["injection_agent_en"],
                        model=judge(fail_when_attacked=True), n_boot=100)
    assert result.pairs["error"].str.startswith("after: LLMCallError").all()
    for instrument in ("rubric", "holistic"):
        row = pooled(result.effects, "injection_agent_en", instrument)
        assert (row["n"], row["n_pairs"]) == (0, 0)
        assert row["n_excluded"] == (12 if instrument == "rubric" else 24)
        assert np.isnan(row["effect"]) and np.isnan(row["ci_low"]) and np.isnan(row["p_value"])
        assert "no valid pair" in row["method"] and row["ci_too_wide"]


def test_language_probe_translates_each_conversation_into_the_other_language():
    frames = transcripts(6)
    # run-01 (English) gets a translation one message short; run-05 (English) comes back untranslated
    model = translator(short_for="invoice 1", copy_for="invoice 5")
    result = run_probes(frames, scenarios=SCENARIOS, probes=["language"], model=judge(), translate_model=model,
                        n_boot=100)
    requests = {REQUEST.match(c.messages[1].content).groups() for c in model.calls}
    assert requests == {("Brazilian Portuguese", "English"), ("English", "Brazilian Portuguese")}
    shown = result.transcripts["language"].set_index("run_id")
    assert shown.loc["run-00", "text"].str.startswith("<English> ").all()
    assert shown.loc["run-03", "text"].str.startswith("<Brazilian Portuguese> ").all()
    bad = result.pairs[result.pairs["run_id"] == "run-01"]
    assert len(bad) == 3 + 6 and bad["error"].str.startswith("language: translation failed").all()
    copied = result.pairs[result.pairs["run_id"] == "run-05"]
    assert copied["error"].str.contains("identical to the original").all()
    assert result.pairs.loc[~result.pairs["run_id"].isin(["run-01", "run-05"]), "error"].isna().all()
    row = pooled(result.effects, "language", "rubric")
    assert (row["n"], row["n_excluded"]) == (4, 6)
    judged = result.judged["rubric"]
    assert set(judged.loc[judged["probe"] == "language", "run_id"]) == {"run-00", "run-02", "run-03", "run-04"}


def test_judge_samples_are_paired_sample_by_sample():
    result = run_probes(transcripts(2), scenarios=SCENARIOS, probes=["verbosity"], model=judge(), samples=2,
                        n_boot=50)
    rubric = result.pairs[result.pairs["instrument"] == "rubric"]
    assert rubric.groupby("sample").size().to_dict() == {0: 6, 1: 6}
    row = pooled(result.effects, "verbosity", "rubric")
    assert (row["n"], row["n_pairs"]) == (2, 12)


def test_unknown_probe_or_missing_rubric_fails_before_any_call():
    model = judge()
    with pytest.raises(ValueError, match="unknown or no probe"):
        run_probes(transcripts(2), scenarios=SCENARIOS, probes=["position"], model=model)
    with pytest.raises(ValueError, match="rubric and a goal"):
        run_probes(transcripts(2), scenarios=[PT], probes=["verbosity"], model=model)
    assert model.calls == []
    assert set(PROBES) == {"criteria_order", "verbosity", "injection_agent_en", "injection_agent_pt",
                           "injection_patient_en", "injection_patient_pt", "language"}


# ── Statistics on hand-made pairs ──


def hand_pairs() -> pd.DataFrame:
    """Ten conversations × two criteria (rubric) and × two dimensions (holistic), with known numbers."""
    before_r = [1, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0, 1, 1]
    after_r = [1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1, 1, 1, 0, 1, 1]
    before_h = [5, 6, 7, 4, 5, 6, 3, 8, 6, 5, 4, 7, 5, 6, 6, 5, 7, 3, 2, 5]
    after_h = [7, 6, 9, 5, 5, 8, 6, 8, 7, 4, 6, 7, 8, 6, 9, 6, 7, 5, 4, 8]
    run_ids = [f"r{i}" for i in range(10) for _ in range(2)]
    rubric = pd.DataFrame({"probe": "p", "run_id": run_ids, "instrument": "rubric", "item": ["a", "b"] * 10,
                           "before": before_r, "after": after_r})
    holistic = pd.DataFrame({"probe": "p", "run_id": run_ids, "instrument": "holistic", "item": ["tone", "safety"] * 10,
                             "before": before_h, "after": after_h})
    return pd.concat([rubric, holistic], ignore_index=True).assign(error=pd.NA)


def test_statistics_are_scipys_and_statsmodels_on_the_same_numbers():
    pairs = hand_pairs()
    effects = probe_effects(pairs, n_boot=300).set_index(["instrument", "item"])
    r = pairs[pairs["instrument"] == "rubric"]
    b, a = r["before"].to_numpy(), r["after"].to_numpy()
    table = [[((b == 1) & (a == 1)).sum(), ((b == 1) & (a == 0)).sum()],
             [((b == 0) & (a == 1)).sum(), ((b == 0) & (a == 0)).sum()]]
    row = effects.loc[("rubric", ALL)]
    assert row["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)
    assert row["flip_rate"] == pytest.approx(np.mean(a != b)) and row["effect"] == pytest.approx(a.mean() - b.mean())
    assert (row["n"], row["n_pairs"], row["test"]) == (10, 20, "mcnemar")
    for item in ("a", "b"):
        sub = r[r["item"] == item]
        t = pd.crosstab(sub["before"], sub["after"]).reindex(index=[1, 0], columns=[1, 0], fill_value=0)
        assert effects.loc[("rubric", item), "p_value"] == pytest.approx(mcnemar(t.to_numpy(), exact=True).pvalue)
    h = pairs[pairs["instrument"] == "holistic"].assign(d=lambda f: f["after"] - f["before"])
    for item in ("tone", "safety"):
        diffs = h.loc[h["item"] == item, "d"].to_numpy()
        assert effects.loc[("holistic", item), "p_value"] == pytest.approx(wilcoxon(diffs).pvalue)
        assert effects.loc[("holistic", item), "effect"] == pytest.approx(diffs.mean())
    per_conversation = h.groupby("run_id", sort=False)["d"].mean().to_numpy()
    assert effects.loc[("holistic", ALL), "p_value"] == pytest.approx(wilcoxon(per_conversation).pvalue)
    assert np.isnan(effects.loc[("holistic", ALL), "flip_rate"])
    for _, row in effects.iterrows():
        assert row["ci_low"] <= row["effect"] <= row["ci_high"]
    assert effects.loc[("holistic", ALL), "ci_too_wide"] == (
        effects.loc[("holistic", ALL), "ci_high"] - effects.loc[("holistic", ALL), "ci_low"] > 3.0)


def test_ci_resamples_conversations_and_is_seeded():
    pairs = hand_pairs()
    first, again = probe_effects(pairs, n_boot=200, seed=4), probe_effects(pairs, n_boot=200, seed=4)
    pd.testing.assert_frame_equal(first, again)
    # A constant difference in every conversation has a zero-width CI whatever conversations are drawn.
    constant = pairs.assign(after=pairs["before"] + 1.0)[pairs["instrument"] == "holistic"]
    row = probe_effects(constant, n_boot=200).iloc[0]
    assert (row["ci_low"], row["effect"], row["ci_high"]) == (1.0, 1.0, 1.0) and not row["ci_too_wide"]


def test_degenerate_cases_are_nan_with_a_reason():
    pairs = hand_pairs()
    same = pairs.assign(after=pairs["before"])
    effects = probe_effects(same, n_boot=50)
    assert (effects["effect"] == 0).all() and effects["p_value"].isna().all()
    assert effects.loc[effects["test"] == "mcnemar", "method"].str.contains("no discordant pair").all()
    assert effects.loc[effects["test"] == "wilcoxon", "method"].str.contains("every difference is zero").all()
    errored = probe_effects(pairs.assign(error="after: boom"), n_boot=50)
    assert errored["effect"].isna().all() and errored["p_value"].isna().all() and (errored["n"] == 0).all()
    assert errored["method"].str.contains("no valid pair").all() and errored["ci_too_wide"].all()
    assert errored.loc[0, "n_excluded"] == 20
    missing_side = pairs.assign(after=np.where(pairs["run_id"] == "r0", np.nan, pairs["after"]))
    row = probe_effects(missing_side, n_boot=50).iloc[0]
    assert (row["n"], row["n_pairs"], row["n_excluded"]) == (9, 18, 2)
    assert probe_effects(pairs.iloc[0:0], n_boot=50).empty


def test_bad_pairs_fail_with_a_clear_error():
    pairs = hand_pairs()
    with pytest.raises(ValueError, match="lacks column"):
        probe_effects(pairs.drop(columns="after"))
    with pytest.raises(ValueError, match="unknown instrument"):
        probe_effects(pairs.assign(instrument="turn"))
    with pytest.raises(ValueError, match="1.0 \\(pass\\) or 0.0"):
        probe_effects(pairs.assign(after=0.5))


# ── Plot ──


def test_forest_plot_has_one_panel_per_instrument_and_one_line_per_probe():
    effects = pd.concat([probe_effects(hand_pairs(), n_boot=50),
                         probe_effects(hand_pairs().assign(probe="q"), n_boot=50)], ignore_index=True)
    fig = plot_probe_effects(effects)
    assert [ax.get_title(loc="left") for ax in fig.axes] == ["rubric judge", "holistic judge"]
    for ax in fig.axes:
        assert [t.get_text() for t in ax.get_yticklabels()] == ["p", "q"]
    detail = plot_probe_effects(effects, items=["tone", "safety"])
    assert len(detail.axes) == 1 and len(detail.axes[0].get_yticklabels()) == 4
    empty = plot_probe_effects(effects.iloc[0:0])
    assert "No probe effect" in empty.texts[0].get_text()


def test_a_re_run_with_new_run_ids_is_perturbed_the_same_way():
    # A re-run mints new run ids; keyed by them, the perturbed transcripts (so the judge calls) would never replay.
    from convoeval.agreement.probes import inject, pad_verbosity
    from convoeval.frames import transcript_frame

    messages = [{"role": r, "text": f"{r} message number {i}"} for i, r in
                enumerate(["patient", "agent"] * 4)]

    def frame(run_id):
        return transcript_frame(messages, run_id=run_id, scenario="s", seed=42, trial=1, target="clinic:billing")

    first, again = frame("run-a"), frame("run-b")
    for perturb in (lambda f: inject(f, role="agent", language="pt-BR"),
                    lambda f: pad_verbosity(f, locales={"s": "pt-BR"})):
        assert perturb(first)["text"].tolist() == perturb(again)["text"].tolist()
    other_trial = transcript_frame(messages, run_id="run-c", scenario="s", seed=42, trial=2, target="clinic:billing")
    texts = {tuple(inject(f, role="agent", language="pt-BR", seed=s)["text"]) for f in (first, other_trial)
             for s in range(4)}
    assert len(texts) > 1  # the trial (and the seed) still decide the perturbation
