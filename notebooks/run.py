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
# # convoeval run report
#
# Runs the scenarios of one agent (simulated patient → agent under test → rubric and holistic judges → database
# assertions) and reports what happened. Run it with papermill, e.g.
#
# ```bash
# papermill notebooks/run.ipynb reports/billing/run.ipynb -p agent billing -p output_dir reports/billing --log-output
# ```
#
# The parameters are `convoeval.pipeline.EvalConfig`'s settings, the same as `convoeval run`'s options. The run's
# data (Parquet + CSV) and a self-contained `report.html` are written to `output_dir` (default: beside the executed
# notebook with `--inject-output-path`, else a new `reports/run-<agent>-s<seed>-<time>-<id>/`). Every cell below
# calls `convoeval.pipeline` (to run) or `convoeval.report` (to show); nothing is computed only here. With no API key
# the models are the embedded local demo model: its numbers show that the pipeline works, not how good an agent is.

# %% tags=["parameters"]
agent = "billing"
seed = 42
scenario = None
type = None
trials = 1
target = None
simulator_model = None
judge_model = None
simulator = None
judge_samples = 1
fail_threshold = None
output_dir = None
concurrency = 4
scenarios_dir = None
domain = None
workers = 1
cluster = None
resume = True
simulator_gate = True
resimulate = 0
labels = None
otel = False

# %%
from convoeval import pipeline, report

config = pipeline.notebook_config(globals())
config

# %% [markdown]
# ## Run
# Conversations already saved in `output_dir` are kept, not re-run (an interrupted notebook resumes); those that
# ended in error are run again. Progress is printed as the conversations finish (`papermill --log-output` shows it
# in the terminal).

# %%
run = pipeline.run_notebook_config(config)
run

# %% [markdown]
# ## What ran

# %%
report.what_ran(run)

# %% [markdown]
# ## Scores

# %%
report.score_table(run)

# %% [markdown]
# ## Plots

# %%
report.plot_components(run)

# %%
report.plot_criteria(run)

# %%
report.plot_holistic(run)

# %% [markdown]
# ## Transcripts
# Click a conversation to open it. Patient on the left, agent on the right; 🔧 chips are tool calls (click for
# arguments and result), ⏹ chips are the simulated patient's stop signals.

# %%
report.transcripts(run)

# %% [markdown]
# ## Failures
# What failed, in how many conversations, with an example of the evidence and the judges' suggestions.

# %%
report.failures(run)

# %% [markdown]
# ## Judges against the database
# The database is free ground truth: each rubric criterion that declares its assertion, the holistic judge's
# `goal_completion` and the simulated patient's `[GOAL_COMPLETE]` are checked against what the agent really did.

# %%
report.database_truth(run)

# %% [markdown]
# ## Calibrated pass rates
# With human labels (`labels`: a label CSV or folder, `evals/labels/README.md`), each judge's pass rate per criterion
# raw, from the labels alone, and calibrated by them (PPI++, isotonic, Rogan–Gladen), with intervals; the database's
# verdicts are calibrated on too, as free labels.

# %%
report.calibrated_rates(run)

# %% [markdown]
# ## Simulated patient's fidelity
# First the conversations the simulator-failure gate stopped while they ran (`simulator_failure`: the patient
# parroted the agent, looped, changed language or invented a fact; not scored, so the agent is not blamed), then the
# conversations where the simulated patient broke its scenario after the fact (invented facts, another language, a
# `[GOAL_COMPLETE]` the database contradicts, parroting the agent): their scores say as much about the simulator
# as about the agent.

# %%
report.fidelity(run)

# %% [markdown]
# ## Errors
# Errors of the evaluation itself (agent crashes, LLM calls that failed after retries, unusable judge answers).

# %%
report.errors(run)

# %% [markdown]
# ## Export
# The same report as one HTML file next to the data, readable without Jupyter. With `fail_threshold` set, the
# last cell fails when a conversation scores below it or ends in error (a gate for CI).

# %%
report.save_html(run)

# %%
pipeline.check_threshold(run)
