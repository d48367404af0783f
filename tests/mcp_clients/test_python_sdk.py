"""webfetch as the reference MCP client (the Python SDK, pinned in
requirements.txt) sees it, in both protocol revisions: 2025-11-25 (the
initialize handshake; `mode="legacy"`) and 2026-07-28 (stateless,
`server/discover`), over `webfetch mcp`'s stdio and `webfetch serve`'s
Streamable HTTP.

The SDK checks what a client checks: it validates each structured result
against the tool's `outputSchema`, and it cancels a request when its caller's
scope is cancelled.
"""

from __future__ import annotations

import http.client
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, List, Tuple

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import Served, Site, binary, run_within, within

#: The two protocol revisions: the SDK's `mode` and what it negotiates.
REVISIONS = [("legacy", "2025-11-25"), ("2026-07-28", "2026-07-28")]


def stdio(config: str) -> StdioServerParameters:
    return StdioServerParameters(command=binary(), args=["mcp", "--config", config])


async def exercise(client: Client, site: Site) -> None:
    """What every transport and revision must do alike."""
    listed = await within("the tool list", client.list_tools())
    tools = {tool.name: tool for tool in listed.tools}
    assert sorted(tools) == ["web_fetch", "web_fetch_batch"]
    for tool in tools.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.destructive_hint is False
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is True
        assert tool.output_schema is not None and tool.title

    told: List[str] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        told.append(message or "")

    # The SDK validates structuredContent against outputSchema on its own.
    result = await within(
        "a web_fetch call",
        client.call_tool("web_fetch", {"url": site.url("/article.html")}, progress_callback=progress),
    )
    assert result.is_error is False
    assert result.structured_content["title"] == "MCP clients"
    assert json.loads(result.content[0].text) == result.structured_content
    assert "extracting the content" in told, told

    blocked = await within(
        "a blocked web_fetch call", client.call_tool("web_fetch", {"url": "http://169.254.169.254/"})
    )
    assert blocked.is_error is True
    assert blocked.structured_content["code"] == "ssrf_blocked"

    batch = await within(
        "a web_fetch_batch call",
        client.call_tool(
            "web_fetch_batch",
            {"urls": [site.url("/article.html"), site.url("/long.html")], "extraction": "srd"},
        ),
    )
    assert batch.is_error is False
    items = batch.structured_content["results"]
    assert [item["url"] for item in items] == [site.url("/article.html"), site.url("/long.html")]
    assert items[0]["response"]["title"] == "MCP clients"
    assert items[1]["response"]["truncated"] is True
    assert isinstance(items[1]["next_start_chunk"], int)


async def cancel_held_call(client: Client, site: Site) -> None:
    """A call cancelled by its caller closes the origin connection it held."""
    async with anyio.create_task_group() as group:

        async def held() -> None:
            await client.call_tool("web_fetch", {"url": site.url("/held")})

        group.start_soon(held)
        await anyio.to_thread.run_sync(site.wait, "the call reached the origin", lambda s: s.opened == 1)
        group.cancel_scope.cancel()
    await anyio.to_thread.run_sync(site.wait, "the cancelled call hung up", lambda s: s.closed == 1)
    # The connection goes on serving.
    again = await within(
        "a call after the cancelled one", client.call_tool("web_fetch", {"url": site.url("/article.html")})
    )
    assert again.is_error is False


@pytest.mark.parametrize("mode,version", REVISIONS)
def test_stdio_both_revisions(mode: str, version: str, site: Site, config: str) -> None:
    async def run() -> None:
        async with Client(stdio(config), mode=mode) as client:
            assert client.protocol_version == version
            await exercise(client, site)
            await cancel_held_call(client, site)

    # The session's start (initialize) and end (the child's exit) are bounded too.
    run_within(f"an MCP session over stdio ({mode})", run())


@pytest.mark.parametrize("mode,version", REVISIONS)
def test_streamable_http_both_revisions(
    mode: str, version: str, site: Site, served: Served
) -> None:
    async def run() -> None:
        async with Client(served.mcp_url, mode=mode) as client:
            assert client.protocol_version == version
            await exercise(client, site)
            # At 2026-07-28 a client cancels over HTTP by closing the request's
            # stream. At 2025-11-25 it POSTs `notifications/cancelled` on its
            # own, which a stateless server (no session, so that any instance
            # may answer any request) can not tie to the call it names: that
            # call ends at its own timeout.
            if mode != "legacy":
                await cancel_held_call(client, site)

    run_within(f"an MCP session over Streamable HTTP ({mode})", run())


class RoundRobin:
    """A reverse proxy that sends each request to the next backend in turn,
    with no session affinity, as a plain load balancer does."""

    def __init__(self, backends: List[str]) -> None:
        self.backends = backends
        self.served: List[int] = [0] * len(backends)
        self.turn = 0
        self.lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def forward(self) -> None:
                with proxy.lock:
                    index = proxy.turn % len(proxy.backends)
                    proxy.turn += 1
                    proxy.served[index] += 1
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                host, port = proxy.backends[index].rsplit(":", 1)
                upstream = http.client.HTTPConnection(host, int(port), timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                upstream.request(self.command, self.path, body=body, headers=headers)
                answer = upstream.getresponse()
                data = answer.read()
                self.send_response(answer.status)
                for key, value in answer.getheaders():
                    if key.lower() not in ("transfer-encoding", "content-length", "connection"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                upstream.close()

            do_GET = do_POST = do_DELETE = forward  # noqa: N815

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def mcp_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/mcp"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_modern_client_alternating_between_two_servers_works(
    site: Site, two_served: List[Served]
) -> None:
    proxy = RoundRobin([served.address for served in two_served])
    try:

        async def run() -> List[Any]:
            async with Client(proxy.mcp_url, mode="2026-07-28") as client:
                await within("the tool list", client.list_tools())
                return [
                    await within(
                        "a web_fetch call through the proxy",
                        client.call_tool("web_fetch", {"url": site.url("/article.html")}),
                    )
                    for _ in range(4)
                ]

        results = run_within("an MCP session through the round-robin proxy", run())
    finally:
        proxy.close()
    assert all(result.is_error is False for result in results)
    assert all(result.structured_content["title"] == "MCP clients" for result in results)
    assert min(proxy.served) >= 2, proxy.served
