"""A WhatsApp bot behind a webhook, written against convoeval's channel protocol (docs/whatsapp.md).

It debounces (keeps a patient's messages and answers them together when the channel says the patient went quiet)
and is idempotent (a message id it has seen is dropped), with nothing but the standard library. Run it and point a
channel scenario at it, with ``#idle`` so it is told about quiet moments::

    python docs/examples/whatsapp_webhook_bot.py 8765 &
    convoeval run my-whatsapp-scenario.yaml --agent "http://127.0.0.1:8765/hook#idle"

Its "understanding" is a stand-in (it repeats what it read); the channel handling is the point.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Bot:
    """The bot's state: the message ids seen and the messages kept per conversation."""

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.kept: dict[str, list[dict]] = {}
        self.lock = threading.Lock()

    def handle(self, body: dict) -> dict:
        session = body["session"]
        conversation = session.get("conversation_id") or f"wa-{session['patient_phone']}"
        reply: dict = {"bubbles": [], "conversation_id": conversation}
        with self.lock:
            if body.get("event") == "idle":  # the patient stopped typing (or went silent)
                burst = sorted(self.kept.pop(conversation, []), key=lambda m: m["sent_at"])
                if burst:
                    said = " / ".join(m["text"] for m in burst)
                    reply["bubbles"] = [f"Recebi: {said}. Como posso ajudar?"]
                return reply
            inbound = session.get("inbound")
            if inbound is None:  # no channel: answer at once
                reply["bubbles"] = [f"Recebi: {body['message']}."]
                return reply
            if inbound["id"] in self.seen:  # a webhook retry: already handled
                return reply
            self.seen.add(inbound["id"])
            self.kept.setdefault(conversation, []).append({"text": body["message"], "sent_at": inbound["sent_at"]})
            return reply  # nothing yet: the patient may still be typing


def serve(port: int, bot: Bot | None = None) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:``port`` (0: any free port) answering POSTs with the bot; call ``serve_forever``."""
    bot = bot or Bot()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            data = json.dumps(bot.handle(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


if __name__ == "__main__":
    serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8765).serve_forever()
