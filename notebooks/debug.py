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
# # convoeval: where did this conversation go wrong?
#
# Shows one saved conversation, then forks it at every turn: its first k patient messages are replayed verbatim
# against the agent on a freshly seeded store, the simulator continues `n` times with new seeds, and every
# continuation is judged and asserted as usual. The failure rate of the continuations per fork point is the
# conversation's **failure profile**: the turn after which failure becomes likely is where it went wrong. Run it with
# papermill, e.g.
#
# ```bash
# papermill notebooks/debug.ipynb reports/debug.ipynb -p results_dir reports/my-run \
#     -p conversation billing-conv-happy-payment__s42__t1
# ```
#
# The cost is shown before anything runs; a profile above `max_calls` LLM calls is refused unless `confirm = True`.
# Every cell calls `convoeval.forking.views`; see docs/fork.md.

# %% tags=["parameters"]
results_dir = "reports/example"
conversation = None
n = 5
turns = None
target = None
simulator_model = None
judge_model = None
judge_samples = 1
scenarios_dir = None
concurrency = 4
max_calls = 200
confirm = False

# %%
from convoeval.forking import views as debug

params = debug.check_debug_parameters(globals())
params

# %% [markdown]
# ## The conversation

# %%
original = debug.load(params)

# %%
debug.show_transcript(original)

# %% [markdown]
# ## Its failure profile
# What forking it at every turn costs, at most, then the failure rate of the continuations per fork point
# (`warn` and `fail` count as failures; continuations that ended in `error` are left out and counted), with a 95%
# Wilson interval.

# %%
debug.profile_cost(original, params)

# %%
profile = debug.run_profile(original, params)

# %%
debug.plot_profile(profile)

# %%
debug.summary(profile)

# %%
profile

# %% [markdown]
# ## The continuations
# Every continuation, then one that passed when forked just before the located turn beside one that failed when
# forked at it: what differs between them is what went wrong.

# %%
debug.continuations(profile)

# %%
debug.contrast(profile)

# %% [markdown]
# ## Keep it from coming back
# The scripted regression test `convoeval pin` writes from this conversation.

# %%
debug.pin_preview(original, params)
