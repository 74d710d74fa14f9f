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
# # convoeval: real conversations in
#
# Imports real WhatsApp conversations (chat exports, Cloud API logs, OTLP traces, tables) into a results folder,
# scrubs their personal data, judges them as a run's conversations are judged, shows the worst ones with the
# command that pins or forks each, and sets the real patients beside a simulated run of the same agent family
# (Sim2Real). Run it with papermill, e.g.
#
# ```bash
# papermill notebooks/production.ipynb reports/production.ipynb -p sources '["chats/"]' \
#     -p agent_name "Clínica Sorriso" -p agent billing -p out_dir reports/prod-w45
# ```
#
# Every cell calls `convoeval.production.notebook`; see docs/production.md.

# %% tags=["parameters"]
sources = ["samples/production/whatsapp/android-pt-BR.txt", "samples/production/cloud-api/webhooks-pt-BR.jsonl"]
agent_name = "Clínica Sorriso"
agent_phone = None
agent = "billing"
out_dir = "reports/production"
scrub = True
judge = True
criteria = None
judge_model = None
judge_samples = 1
worst = 5
simulated_dir = "reports/example"

# %%
from convoeval.production import notebook as production

params = production.production_params(globals())
params

# %% [markdown]
# ## Import and scrub

# %%
summary = production.import_step(params)

# %%
production.scrub_report(summary)

# %% [markdown]
# ## Judge

# %%
result = production.judge_step(params)

# %%
production.scores(result)

# %% [markdown]
# ## The worst conversations, and the commands that pin or fork each

# %%
production.worst_conversations(result, params)

# %%
production.show_conversations(result)

# %% [markdown]
# ## Sim2Real: the simulated patients beside the real ones

# %%
production.sim2real_step(result, params)

# %%
production.sim2real_plot(result, params)

# %%
result
