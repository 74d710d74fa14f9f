"""URLs that may carry secrets (webhook tokens, proxy passwords): their safe form, and a log filter for httpx.

An agent webhook (``https://agent.example/hook?key=…``) or an LLM endpoint behind an authenticating proxy
(``http://user:password@proxy/v1``) holds a credential inside its URL. Reports, frames, caches, errors and logs only
ever see ``safe_url(url)``; ``hide_in_logs(url)`` registers the URL's secrets with the filter on the ``httpx``
logger, which prints every request's full URL at INFO level.
"""

from __future__ import annotations

import logging
from typing import Any

# The openai SDK's fork of httpx: the same URL type, without httpx's import of its command line (click, rich,
# pygments: a tenth of convoeval's start-up).
import httpx2 as httpx

__all__ = ["hide_in_logs", "safe_url", "url_secrets"]


def safe_url(url: str) -> str:
    """The URL without credentials or query values, fit for names, errors, logs and cache keys.

    Example:
        >>> safe_url("https://bot:s3cret@agent.example/hook?key=abc")
        'https://agent.example/hook?…'
    """
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        return "<invalid url>"
    port = f":{parsed.port}" if parsed.port else ""
    query = "?…" if parsed.query else ""
    return f"{parsed.scheme}://{parsed.host}{port}{parsed.path}{query}"


def url_secrets(url: Any) -> set[str]:
    """Query values and password of a URL (a string or an httpx URL), decoded and as written (logs show both)."""
    url = httpx.URL(str(url))
    values = {v for _, v in url.params.multi_items()} | {url.password or ""}
    raw_query = url.query.decode("ascii", errors="replace")
    values |= {part.partition("=")[2] for part in raw_query.split("&")}
    values |= {url.userinfo.decode("ascii", errors="replace").partition(":")[2]}
    return {v for v in values if len(v) >= 4}


class _LogScrubber(logging.Filter):
    """Blanks registered secrets in the records of the ``httpx`` loggers, which log every request's full URL."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            for secret in self.secrets:
                message = message.replace(secret, "***")
            record.msg, record.args = message, ()
        return True


SCRUBBER = _LogScrubber()
# The OpenAI SDK may ship on httpx or on its fork httpx2; both log each request's URL under their own name.
for _name in ("httpx", "httpx2"):
    logging.getLogger(_name).addFilter(SCRUBBER)


def hide_in_logs(url: Any, *extra: str) -> None:
    """Register the secrets of ``url`` (and ``extra`` values) so the ``httpx`` log lines show ``***`` instead."""
    SCRUBBER.secrets |= url_secrets(url) | {e for e in extra if e}
