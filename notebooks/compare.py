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
# # convoeval comparison: is the candidate better than the baseline?
#
# Pairs the baseline's and the candidate's conversations by scenario, seed and trial, and says, per scenario,
# criterion, database assertion and overall, whether the candidate **improved**, **regressed** or showed **no
# detectable change**, with confidence intervals and the smallest change this sample could detect. Run it with
# papermill, e.g.
#
# ```bash
# papermill notebooks/compare.ipynb reports/compare.ipynb -p baseline reports/v1 \
#     -p candidate_target 'clinic:billing?faults=wrong_amount' -p replay True --log-output
# ```
#
# The candidate is a results folder (`candidate`), a target run now on exactly the baseline's conversations
# (`candidate_target`, with `replay` to replay the baseline's patient), or the baseline's own target again (`aa`,
# the noise floor). Every cell calls `convoeval.compare` (to compare) or `convoeval.compare.views` (to show).
# See `docs/compare.md`.

# %% tags=["parameters"]
baseline = None
candidate = None
candidate_target = None
replay = False
aa = False
agent = None
scenario = None
type = None
alpha = 0.05
detect = 1.0
fail_on_regression = False
output_dir = None
labels = None

# %%
from convoeval import compare
from convoeval.compare import views

params = compare.notebook.compare_params(globals())
params

# %% [markdown]
# ## Compare
# A candidate run now resumes in its own folder; progress is printed as its conversations finish.

# %%
result = compare.notebook.run_compare_params(params)
result

# %% [markdown]
# ## Verdict
# A change is called only when its CI excludes 0 and a paired test rejects "no change" (Holm-adjusted over the
# scenarios), or when a deterministic check (a database or path assertion, a scripted turn check) flipped in a
# scripted pair: a fact, no test needed. "No detectable change" is not "no change": the MDD is the smallest change
# this sample would detect; with too few pairs the panel says so and gives the commands that would test it.

# %%
views.verdict_summary(result)

# %%
views.plot_forest(result)

# %% [markdown]
# ## Deterministic checks that flipped
# Each database or path assertion and scripted turn check that held on one side of a pair and failed on the other,
# with the scenario, seed and trial, and whether it counts as a fact (scripted, and the same on a side's own runs).

# %%
views.flipped_checks(result)

# %% [markdown]
# ## Criteria and assertions that changed
# Pass→fail and fail→pass flips per rubric criterion and database assertion (the database needs no judge), with
# McNemar's exact test, Holm-adjusted over each family.

# %%
views.changed_items(result)

# %% [markdown]
# ## Conversations that changed
# Baseline | candidate, side by side; the first turn where they differ is highlighted (with replay: where the
# candidate's reply first differed from the recording).

# %%
views.flipped_conversations(result)

# %% [markdown]
# ## Other differences
# Pass rate, holistic dimensions, pass^k, and cost, tokens and latency per conversation.

# %%
views.details(result)

# %% [markdown]
# ## Calibrated pass rates
# With human labels (`labels`: a label CSV or folder naming conversations by run id), each criterion's judge pass
# rate calibrated on each side's labels (PPI++), and the change with its interval.

# %%
views.calibrated_changes(result)

# %%
views.unpaired(result)

# %% [markdown]
# ## Export
# The same report as one HTML file. With `fail_on_regression`, the last cell fails when a regression is
# statistically supported, naming it (a gate for CI).

# %%
views.save_compare_html(result, compare.notebook.html_path(params, result))

# %%
compare.notebook.check_regressions(result, params)
