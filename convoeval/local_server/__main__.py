"""``python -m convoeval.local_server ARGS``: llama-cpp-python's server (``ARGS`` its own) with convoeval's changes."""

import sys

from convoeval.local_server.app import serve

serve(sys.argv[1:])
