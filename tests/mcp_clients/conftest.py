"""Fixtures for the MCP client tests: the webfetch binary under test, loopback
sites it may fetch (the configuration opens loopback through the visible gate,
as the Rust tests do), and `webfetch serve` processes.

`WEBFETCH_BIN` names the binary (`.ci/run` sets it to the suite's debug build).
"""

from __future__ import annotations

import asyncio
import os
import queue
import re
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Awaitable, Coroutine, Iterator, List, TypeVar

import anyio
import pytest

#: How long a test waits for an event before failing: a failure detector, never
#: a synchronisation (a passing run does not wait for it).
WAIT_SECONDS = 30

#: How long a test waits for an MCP session, a call or a server's start before
#: failing: minutes, for what takes seconds; a way out, never a timing assertion.
CALL_SECONDS = 120

T = TypeVar("T")


async def within(what: str, awaitable: Awaitable[T]) -> T:
    """What `awaitable` gives, or a failure naming `what` after `CALL_SECONDS`."""
    try:
        with anyio.fail_after(CALL_SECONDS):
            return await awaitable
    except TimeoutError:
        raise AssertionError(f"gave up after {CALL_SECONDS} s waiting for {what}") from None


def run_within(what: str, session: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(session)`, failing naming `what` after `CALL_SECONDS`.

    The session runs as a task of its own, under no cancel scope of ours: the
    SDK tells a call's cancellation from its caller's scope, which an
    enclosing deadline scope would blur.
    """

    async def watched() -> T:
        task = asyncio.ensure_future(session)
        done, _ = await asyncio.wait({task}, timeout=CALL_SECONDS)
        if not done:
            task.cancel()
            raise AssertionError(f"gave up after {CALL_SECONDS} s waiting for {what}")
        return task.result()

    return asyncio.run(watched())


ARTICLE = (
    "<!doctype html><html lang='en'><head><title>MCP clients</title></head>"
    "<body><main><h1>Read by an MCP client</h1>"
    "<p>The reference SDK fetched this page through webfetch.</p></main></body></html>"
)


def binary() -> str:
    path = os.environ.get("WEBFETCH_BIN")
    if not path:
        root = Path(__file__).resolve().parents[2]
        path = str(root / "target" / "debug" / "webfetch")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no webfetch binary at {path} (set WEBFETCH_BIN)")
    return path


class Site:
    """A loopback HTTP server: `/article.html`, `/long.html`, and `/held`,
    which sends a page's head and first bytes and then holds the connection
    until webfetch closes it (counted in `closed`)."""

    def __init__(self) -> None:
        self.port = 0
        self.opened = 0
        self.closed = 0
        self.changed = threading.Condition()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def wait(self, what: str, predicate) -> None:  # type: ignore[no-untyped-def]
        with self.changed:
            if not self.changed.wait_for(lambda: predicate(self), timeout=WAIT_SECONDS):
                raise AssertionError(f"{what}: opened {self.opened}, closed {self.closed}")


def _handler(site: Site) -> type:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path == "/robots.txt":
                self.send_error(404)
                return
            if self.path == "/held":
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                self.wfile.write(b"<html><body><p>The first words of a page that never ends.")
                self.wfile.flush()
                with site.changed:
                    site.opened += 1
                    site.changed.notify_all()
                # webfetch sends nothing more: this read ends when it hangs up.
                self.rfile.read(1)
                with site.changed:
                    site.closed += 1
                    site.changed.notify_all()
                self.close_connection = True
                return
            if self.path == "/long.html":
                body = "".join(
                    f"<h2>Part {i}</h2><p>{'Many words on a long page. ' * 40}</p>"
                    for i in range(200)
                )
                page = f"<html><head><title>Long</title></head><body>{body}</body></html>"
            else:
                page = ARTICLE
            data = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(site))
    server.daemon_threads = True
    site.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield site
    server.shutdown()
    server.server_close()


@pytest.fixture
def config(site: Site, tmp_path: Path) -> str:
    path = tmp_path / "webfetch.toml"
    path.write_text(
        "[tools.webfetch]\n"
        "timeout_seconds = 60\n"
        'cache_dir = ""\n'
        "[tools.webfetch.security]\n"
        "allow_insecure_overrides = true\n"
        "block_loopback = false\n"
        f"allowed_ports = [{site.port}]\n"
        "[tools.webfetch.browser]\n"
        "enabled = false\n"
    )
    return str(path)


class Served:
    """A running `webfetch serve` on a free loopback port."""

    def __init__(self, config: str) -> None:
        self.process = subprocess.Popen(
            [binary(), "serve", "--listen", "127.0.0.1:0", "--config", config],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.process.stderr is not None
        announced: queue.Queue[str] = queue.Queue()

        def read(stderr) -> None:  # type: ignore[no-untyped-def]
            # The announcement, then the rest drained so that the child never
            # blocks on a full pipe; "" when stderr closes without it.
            for line in stderr:
                found = re.search(r"listening on http://(\S+)", line)
                if found:
                    announced.put(found.group(1))
            announced.put("")

        threading.Thread(target=read, args=(self.process.stderr,), daemon=True).start()
        try:
            self.address = announced.get(timeout=CALL_SECONDS)
        except queue.Empty:
            self.process.kill()
            raise AssertionError(f"webfetch serve did not announce its address in {CALL_SECONDS} s") from None
        if not self.address:
            raise AssertionError("webfetch serve did not start")

    @property
    def mcp_url(self) -> str:
        return f"http://{self.address}/mcp"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=WAIT_SECONDS)


@pytest.fixture
def served(config: str) -> Iterator[Served]:
    server = Served(config)
    yield server
    server.stop()


@pytest.fixture
def two_served(config: str) -> Iterator[List[Served]]:
    servers = [Served(config), Served(config)]
    yield servers
    for server in servers:
        server.stop()
