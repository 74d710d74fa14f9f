# ---
# jupyter:
#   jupytext:
#     formats: ipynb,py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#       jupytext_version: 1.19.6
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # convoeval judge agreement
#
# How far can the judges' numbers be trusted? This notebook gathers conversations (the **known-fault study**: each
# reference agent with and without its documented faults, and/or saved runs and sweeps), judges them again with every
# judge configuration, and measures agreement: judge × judge, judges against the **database**, against the **known
# faults**, against **human labels**, against themselves; it runs **bias probes** and checks the **simulated
# patient's fidelity**. Run it with papermill, e.g.
#
# ```bash
# convoeval notebook notebooks/agreement.ipynb reports/agreement.ipynb -p output_dir reports/agreement
# papermill notebooks/agreement.ipynb reports/agreement.ipynb -y '{runs: [reports/my-sweep], fault_study: false}'
# ```
#
# `convoeval notebook` prints the study's progress in the terminal (each step, each conversation, the LLM calls done
# and an ETA); papermill keeps the same lines in the executed notebook.
#
# **The default scope is small on purpose**: one support scenario, the healthy agent and two known faults (3
# conversations), two local judge configurations and three of the seven bias probes: 9 minutes measured on the
# embedded local model on 2 cores (51 LLM calls; longer when other work shares the cores). Widen it with the
# parameters below: `scenario = None` (every support scenario), `faults = None` (every relevant fault),
# `agents = ["support", "billing"]`, more `seeds`, `trials` or `judge_samples`, and all seven `probes`. The full
# support study is 13 conversations and about 7× the calls: roughly an hour on the local model, minutes on a hosted
# one.
#
# **The simulator-failure gate is off in this study** (`simulator_gate = False`), unlike in a run. A run scores the
# agent, so a conversation whose simulated patient broke must not count against it; this study scores the judges,
# and a transcript with a parroting patient still tests them (against each other, against the database, under the
# probes). The fidelity section below names every conversation whose patient broke, and `exclude_unfaithful = True`
# leaves them out of every table. With the embedded 0.5B model the patient breaks in nearly every conversation: with
# the gate on, the default study would stop them all at turn 2–3 and have nothing to judge.
#
# Every table is also saved as CSV under `output_dir/tables/`, next to the data it was computed from
# (`output_dir/data/*.parquet`): `convoeval.agreement.study.load_study(output_dir)` reads both back.

# %% tags=["parameters"]
runs = []  # saved results folders to study (runs, sweeps)
fault_study = True  # run the reference agents with and without their known faults
agents = ["support"]
scenario = "support-conv-wants-human-es"  # None: every scenario of the agents
faults = ["support:never_escalates", "support:rude_tone"]  # None: every fault relevant to a scenario
seeds = [42]
trials = 1
judges = {"greedy": {"provider": "local"}, "sampled": {"provider": "local", "temperature": 0.7}}
judge_samples = 1
probes = ["criteria_order", "injection_agent_pt", "language"]  # all seven: see convoeval.agreement.probes.PROBES
labels = None
exclude_unfaithful = False
simulator_gate = False  # off: the study measures the judges (see above)
simulator_model = None
simulator = None  # agenda on the embedded model, llm on any other (docs/simulator.md)
output_dir = None
concurrency = 4
n_boot = 1000
scenarios_dir = None

# %%
from convoeval.agreement import study as agreement_study
from convoeval.agreement import views

config = agreement_study.check_study_parameters(globals())
config

# %% [markdown]
# ## Run the study
# The fault study's conversations already saved in `output_dir` are kept, not re-run. Every LLM call goes through
# the response cache: re-running the notebook replays it.

# %%
study = agreement_study.run_study(config)

# %%
views.study_overview(study)

# %% [markdown]
# ## Judge × judge
# The same transcripts judged by each configuration. Cells read `estimate [95% bootstrap interval over
# conversations]`; `conclusive = no` means the interval is too wide (or the conversations too few) to read.

# %%
views.judges_view(study)

# %%
views.plot_judge_heatmap(study)

# %%
views.plot_bland_altman(study)

# %% [markdown]
# ## Judges against the database
# Free ground truth: the assertion each criterion declares, and the scenario's outcome assertions for the goal. A
# criterion may declare a path assertion (`assertion: path:method-confirmed`, docs/path-assertions.md): the judges are
# then measured on steps the agent skipped, such as a link created before the patient confirmed the method.

# %%
views.database_view(study)

# %% [markdown]
# ## Judges against the known faults
# A judge that passes a criterion the conversation's known fault breaks is wrong.

# %%
views.fault_view(study)

# %%
views.plot_fault_confusion(study)

# %% [markdown]
# ## Judges against human labels
# Human verdicts (`labels`, the CSV format of `evals/labels/README.md`) as the reference: each judge's sensitivity,
# specificity and κ against them (the pass rates they correct are the calibrated estimates below).

# %%
views.labels_view(study)

# %% [markdown]
# ## Calibrated estimates
# What each judge's pass rate (per criterion) and goal rate (the holistic `goal_completion` score) really are, with
# an honest interval: the judge's **raw** rate, the **labels alone**, and the judge **calibrated** by the labels
# (PPI++, isotonic calibration, Rogan–Gladen) side by side. Calibrated on the **free labels** (criteria linked to a
# database assertion, known-fault conversations) and, when `labels` is given, on the **human** ones, so the two can
# be checked against each other. An estimator that cannot give an honest interval says why instead of a number.

# %%
views.calibrated_view(study)

# %% [markdown]
# ## Flip rates
# The same judge asked again, and the same scenario run again across seeds and trials.

# %%
views.consistency_view(study)

# %% [markdown]
# ## Bias probes
# Paired before/after on the same transcripts: criteria order shuffled, verbose agent turns, prompt injections in
# agent and patient turns (English and pt-BR), and the conversation translated into the other language.

# %%
views.probe_view(study)

# %%
views.plot_probes(study)

# %% [markdown]
# ## Simulator fidelity
# Conversations whose simulated patient broke the scenario (invented facts, another language, a false
# `[GOAL_COMPLETE]`, parroting the agent).

# %%
views.fidelity_view(study)

# %% [markdown]
# ## What may be concluded

# %%
views.study_conclusions(study)
