"""A local server speaking enough of OpenAI's chat-completions API for the real ``OpenAIChatCompletionClient``.

It answers every request with the next of its scripted answers (the last one repeats) and keeps the requests, so a
test sees what our code really sent a provider: no fake client stands in for the SDK.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class StubAnswer:
    """One scripted answer: an HTTP status and the assistant's content (or an error body)."""

    content: str = ""
    status: int = 200
    delay_s: float = 0.0


@dataclass
class OpenAIStub:
    """The running server: its base URL and the JSON bodies it received."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


@contextmanager
def openai_stub(*answers: StubAnswer) -> Iterator[OpenAIStub]:
    """Serve ``answers`` in turn on a free local port for the duration of the block."""
    script = list(answers) or [StubAnswer()]
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
            with lock:
                stub.requests.append(body)
                answer = script[min(len(stub.requests), len(script)) - 1]
            time.sleep(answer.delay_s)
            if answer.status == 200:
                out: dict[str, Any] = {
                    "id": f"stub-{len(stub.requests)}",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body.get("model", "stub"),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer.content},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            else:
                out = {"error": {"message": answer.content or "stub error", "type": "stub", "code": answer.status}}
            data = json.dumps(out).encode()
            self.send_response(answer.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True  # a slow answer still asleep does not hold the block's end
    server.block_on_close = False
    stub = OpenAIStub(base_url=f"http://127.0.0.1:{server.server_port}/v1")
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
