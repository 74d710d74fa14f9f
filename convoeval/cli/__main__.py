"""``python -m convoeval.cli``: the ``convoeval`` command."""

from convoeval.cli import console

console()
