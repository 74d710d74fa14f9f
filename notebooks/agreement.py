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
# papermill notebooks/agreement.ipynb reports/agreement.ipynb -p output_dir reports/agreement
# papermill notebooks/agreement.ipynb reports/agreement.ipynb -y '{runs: [reports/my-sweep], fault_study: false}'
# ```
#
# Every table is also saved as CSV under `output_dir/tables/`, next to the data it was computed from
# (`output_dir/data/*.parquet`): `convoeval.agreement.study.load_study(output_dir)` reads both back.

# %% tags=["parameters"]
runs = []
fault_study = True
agents = ["support"]
scenario = None
faults = None
seeds = [42]
trials = 1
judges = {"greedy": {"provider": "local"}, "sampled": {"provider": "local", "temperature": 0.7}}
judge_samples = 1
probes = ["criteria_order", "verbosity", "injection_agent_en", "injection_agent_pt", "injection_patient_en", "injection_patient_pt", "language"]
labels = None
exclude_unfaithful = False
simulator_gate = True
simulator_model = None
output_dir = None
concurrency = 4
n_boot = 1000
scenarios_dir = None

# %%
from convoeval.agreement import study as agreement_study
from convoeval.report import agreement_views as views

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
# Free ground truth: the assertion each criterion declares, and the scenario's outcome assertions for the goal.

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
# Human verdicts (`labels`, the CSV format of `evals/labels/README.md`) as the reference, and each judge's pass rate
# corrected for the sensitivity and specificity measured against them.

# %%
views.labels_view(study)

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
