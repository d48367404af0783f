"""Fixtures: a real HTTP server on 127.0.0.1 (http.server in a thread) and the
configuration that lets the tool reach it.

Loopback is blocked by default (FR-WF-05); the configuration opens it the way
the Rust integration tests do (tests/it/support.rs): the visible gate
``allow_insecure_overrides`` plus ``block_loopback = false``, and only the
server's port allowed. Private and other reserved ranges stay blocked.
"""

from __future__ import annotations

import threading
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Dict, Iterator, Optional

import pytest

#: How long a gated request waits for the others: a failure detector, not a
#: synchronisation (a passing run never waits for it to run out).
GATE_TIMEOUT_SECONDS = 20

#: How long a test waits for a fetch, or for a thread to end, before failing: a
#: way out for what never comes, never a timing assertion (minutes, for what
#: takes a second).
WAIT_SECONDS = 120

ARTICLE = (
    "<!doctype html><html lang='en'><head><title>Python bindings</title></head>"
    "<body><main><h1>Hello from loopback</h1>"
    "<p>The tool fetched this page through the Python bindings.</p>"
    "</main></body></html>"
)


def long_page() -> str:
    paragraphs = "".join(
        f"<h2>Section {i}</h2><p>{' '.join(['lorem ipsum dolor sit amet'] * 40)} ({i})</p>"
        for i in range(12)
    )
    return f"<!doctype html><html><head><title>Long</title></head><body>{paragraphs}</body></html>"


class Site:
    """What the server serves and what it saw."""

    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.gate: Optional[threading.Barrier] = None
        self.port = 0

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def open_gate(self, parties: int) -> None:
        """Requests to ``/gate/...`` are answered only once ``parties`` of them
        are in flight at the same time; otherwise the gate breaks and they are
        answered 503."""
        self.gate = threading.Barrier(parties, timeout=GATE_TIMEOUT_SECONDS)

    def count(self, path: str) -> int:
        with self.lock:
            return self.hits[path]


def make_handler(site: Site) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            with site.lock:
                site.hits[self.path] += 1
            if self.path == "/robots.txt":
                self.reply(404, "text/plain", "no robots here")
            elif self.path == "/article.html":
                self.reply(200, "text/html; charset=utf-8", ARTICLE)
            elif self.path == "/long.html":
                self.reply(200, "text/html; charset=utf-8", long_page())
            elif self.path.startswith("/gate/") and site.gate is not None:
                try:
                    site.gate.wait()
                except threading.BrokenBarrierError:
                    self.reply(503, "text/plain", "the gate broke: requests were not concurrent")
                    return
                name = self.path.rsplit("/", 1)[-1]
                body = f"<html><head><title>{name}</title></head><body><p>Page {name}.</p></body></html>"
                self.reply(200, "text/html; charset=utf-8", body)
            else:
                self.reply(404, "text/plain", "not found")

        def reply(self, status: int, content_type: str, body: str) -> None:
            data = body.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(site))
    server.daemon_threads = True
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        if site.gate is not None:
            site.gate.abort()
        server.shutdown()
        server.server_close()
        thread.join(timeout=WAIT_SECONDS)
        assert not thread.is_alive(), "the site's server thread did not end"


def loopback_config(port: int, cache_dir: Optional[Path] = None) -> str:
    """TOML that lets the tool reach 127.0.0.1:``port``; caching off unless
    ``cache_dir``; the browser off."""
    cache = str(cache_dir) if cache_dir is not None else ""
    return (
        "[tools.webfetch]\n"
        "timeout_seconds = 30\n"
        f"cache_dir = {toml_string(cache)}\n"
        "[tools.webfetch.security]\n"
        "allow_insecure_overrides = true\n"
        "block_loopback = false\n"
        f"allowed_ports = [{port}]\n"
        "[tools.webfetch.browser]\n"
        "enabled = false\n"
    )


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.fixture
def config(site: Site) -> str:
    return loopback_config(site.port)

