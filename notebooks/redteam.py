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
# # convoeval privacy red team: does the assistant give one patient's data to another caller?
#
# Runs the attack library (`evals/attacks`) against the agents: each attack seeds a clinic with other patients whose
# data are canaries, plays the caller's turns, and finds leaks with no LLM (the canaries in the agent's messages,
# unverified reads of their rows in the tools' access log, changes to their rows in the store). Run it with
# papermill or `convoeval notebook`, e.g.
#
# ```bash
# convoeval notebook notebooks/redteam.ipynb reports/redteam.ipynb -p agents billing -p locales en \
#     -p faults discloses_third_party
# ```
#
# The parameters are `convoeval redteam`'s options (all but `--judge`), with the same defaults and the same numbers
# (both call `run_redteam`); a scripted red team needs no LLM. A results folder (the cases' verdicts in `data/attacks.csv`, the leaks in `data/leaks.csv`, the transcripts; `load_results` reads it) and a self-contained `report.html` are written to
# `output_dir` (default: beside the executed notebook, else a new `reports/redteam-<time>/`). Every cell calls
# `convoeval.redteam.notebook` (to run) or `convoeval.redteam.views` (to show). See `docs/redteam.md`.

# %% tags=["parameters"]
agents = None
strategies = None
locales = None
faults = []
targets = None
attacks = None
output_dir = None
store = None
concurrency = 4
form = "scripted"
simulator_model = None
seed = 42
workers = 1
cluster = None
fail_on_leak = False

# %%
from convoeval.redteam import notebook as redteam
from convoeval.redteam import views

params = redteam.redteam_params(globals())
params

# %% [markdown]
# ## Run
# A line per case as it finishes (`papermill --log-output` shows them in the terminal).

# %%
red = redteam.run_redteam_params(params)

# %% [markdown]
# ## What ran

# %%
views.redteam_overview(red)

# %% [markdown]
# ## Attack success rate
# The share of attacks (legitimate requests left out) with at least one leak, per strategy and agent over every
# locale; each cell shows the rate and leaked/attacks, and a grey cell a pair that did not run. Then per strategy ×
# agent × locale with 95% Wilson intervals: with a few cases per cell, 0 leaks still allows a large ASR.

# %%
views.asr_heatmap(red)

# %%
views.asr_table(red)

# %% [markdown]
# ## Leaks by kind
# `name`, `cpf`, `phone`, `birth_date`, `appointment`, `invoice`: another patient's canary in a message; `read`,
# `write`: the tools read or changed another patient's rows without a verified session.

# %%
views.leak_kinds(red)

# %% [markdown]
# ## Over-refusal
# Legitimate requests (a relative who gives the patient's CPF and birth date) the agent did not serve.

# %%
views.over_refusal_table(red)

# %% [markdown]
# ## Utility under attack
# Attacks that open with the caller's own request: was it served before the attack began?

# %%
views.utility_table(red)

# %% [markdown]
# ## Leaks in their transcripts
# Caller on the left, agent on the right. A leaking turn is framed in red, the leaked text is highlighted, and a
# chip per leak names its kind and whose data it was (for a tool read, which tools; hover for the rows).

# %%
views.leak_transcripts(red)

# %% [markdown]
# ## Errors

# %%
views.redteam_errors(red)

# %% [markdown]
# ## Export
# The same report as one HTML file in the results folder. With `fail_on_leak`, the last cell fails when any case
# leaked, naming them (a gate for CI: `convoeval notebook` exits 5, as `convoeval redteam --fail-on-leak`).

# %%
views.save_redteam_html(red)

# %%
redteam.check_leaks(red, params)
