"""``python -m convoeval.cli``: the ``convoeval`` command."""

import sys

from convoeval.cli import main

sys.exit(main())
