"""A loopback HTTP server that plays a faulty OpenAI-compatible endpoint, one fault per URL prefix.

`http://127.0.0.1:PORT/<mode>/v1` answers `/chat/completions` with:
- `ok`: a valid completion; its content is `replies[<mode>]` (a function of the request) or "{}";
- `error500`: HTTP 500; `ratelimit`: HTTP 429 with `Retry-After: 1` on the first request, then `ok`;
- `slow`: a valid completion after `slow_seconds` (a client timeout, as from a dead server);
- `malformed`: HTTP 200 whose body is not JSON; `wrongschema`: HTTP 200 JSON that is no completion;
- `wrongcontent`: a valid completion whose content is JSON of the wrong shape.
Every request is recorded as (mode, time, request body).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def completion(content: str) -> dict:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 0,
        "model": "fault",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


class _Handler(BaseHTTPRequestHandler):
    server: "FaultServer"

    def log_message(self, *args) -> None:
        pass

    def _send(self, status: int, body: bytes, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def do_POST(self) -> None:
        mode = self.path.strip("/").split("/")[0]
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with self.server.lock:
            self.server.requests.append((mode, time.time(), request))
            seen = sum(1 for m, _, _ in self.server.requests if m == mode)
        if mode == "error500":
            self._send(500, b'{"error": {"message": "internal error", "type": "server_error"}}')
        elif mode == "ratelimit" and seen == 1:
            self._send(429, b'{"error": {"message": "slow down", "type": "rate_limit"}}', {"Retry-After": "1"})
        elif mode == "slow":
            time.sleep(self.server.slow_seconds)
            self._send(200, json.dumps(completion("{}")).encode())
        elif mode == "malformed":
            self._send(200, b"this is not json {")
        elif mode == "wrongschema":
            self._send(200, b'{"unexpected": true}')
        elif mode == "wrongcontent":
            self._send(200, json.dumps(completion('{"foo": 1}')).encode())
        else:
            reply = self.server.replies.get(mode, lambda request: "{}")(request)
            self._send(200, json.dumps(completion(reply)).encode())


class FaultServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, slow_seconds: float = 30.0):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, float, dict]] = []
        self.replies: dict = {}
        self.slow_seconds = slow_seconds
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    def url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/{mode}/v1"

    def count(self, mode: str) -> int:
        return sum(1 for m, _, _ in self.requests if m == mode)

    def __enter__(self) -> "FaultServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()
        self.server_close()
