"""One pull-request comment kept up to date through GitHub's REST API (the GitHub Action's ``pr_check``).

The comment is found again by a hidden marker line, so a pull request gets one convoeval comment that each push
updates instead of a new comment per run. Only the standard library talks to the API (``urllib``); its address is
``$GITHUB_API_URL`` (GitHub Enterprise, or a local fake server in the tests), else ``https://api.github.com``.
The token is sent in a header and never printed: an error names the request and the HTTP status only.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from convoeval.errors import ConvoevalError

__all__ = ["MARKER", "CommentError", "pull_request_number", "upsert_comment"]

#: The hidden line that marks convoeval's comment (Markdown renders an HTML comment as nothing).
MARKER = "<!-- convoeval-pr-check -->"
#: Comments read per page while looking for ours (the API's maximum), and pages read at most.
PAGE_SIZE, MAX_PAGES = 100, 20
TIMEOUT_S = 30


class CommentError(ConvoevalError, RuntimeError):
    """The comment could not be read, written or addressed; ``str()`` is one line without the token."""


def pull_request_number(environ: Mapping[str, str] | None = None) -> int | None:
    """The pull request this workflow run is about: from the event payload (``$GITHUB_EVENT_PATH``) of a
    ``pull_request``/``pull_request_target`` event, or of an ``issue_comment`` on a pull request; ``None`` when the
    run is not about one (a push)."""
    env = os.environ if environ is None else environ
    path = env.get("GITHUB_EVENT_PATH")
    if not path or not Path(path).is_file():
        return None
    try:
        event = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for key in ("pull_request", "issue"):
        number = (event.get(key) or {}).get("number") if isinstance(event, dict) else None
        if isinstance(number, int):
            return number
    return None


def _request(method: str, url: str, token: str, body: Mapping[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28", "User-Agent": "convoeval-pr-check",
        **({"Content-Type": "application/json"} if data is not None else {})})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            text = response.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        raise CommentError(f"{method} {url}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise CommentError(f"{method} {url}: {getattr(exc, 'reason', exc)}") from None
    try:
        return json.loads(text) if text else None
    except ValueError:
        raise CommentError(f"{method} {url}: the answer is not JSON") from None


def upsert_comment(body: str, *, token: str, repository: str, number: int,
                   api_url: str | None = None) -> tuple[str, int]:
    """Create convoeval's comment on pull request ``number``, or update it if it is there already.

    Args:
        body: the Markdown; ``MARKER`` is added in front when missing.
        token: a token allowed to write issues/pull-request comments (``GITHUB_TOKEN`` with
            ``pull-requests: write``).
        repository: ``owner/name`` (``$GITHUB_REPOSITORY``).
        number: the pull request's number.
        api_url: the REST API's root (default ``$GITHUB_API_URL``, else ``https://api.github.com``).

    Returns:
        ``("created" | "updated", comment id)``.

    Raises:
        CommentError: a request failed (one line: method, URL, status).
    """
    root = (api_url or os.environ.get("GITHUB_API_URL") or "https://api.github.com").rstrip("/")
    if repository.count("/") != 1:
        raise CommentError(f"repository must be owner/name, got {repository!r}")
    text = body if MARKER in body else f"{MARKER}\n{body}"
    comments = f"{root}/repos/{repository}/issues/{number}/comments"
    for page in range(1, MAX_PAGES + 1):
        found = _request("GET", f"{comments}?per_page={PAGE_SIZE}&page={page}", token) or []
        for comment in found:
            if MARKER in str(comment.get("body") or ""):
                _request("PATCH", f"{root}/repos/{repository}/issues/comments/{comment['id']}", token, {"body": text})
                return "updated", int(comment["id"])
        if len(found) < PAGE_SIZE:
            break
    created = _request("POST", comments, token, {"body": text})
    return "created", int(created["id"])
