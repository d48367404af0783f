"""The MCP client configurations of examples/mcp-clients, tried as far as a
configuration file goes: each names a command and arguments, and the server
they start, as its client would start it (with the binary under test in place
of the example path), speaks MCP and lists webfetch's tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from conftest import binary, run_within

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "mcp-clients"

#: Each client's file and the key its servers sit under.
CLIENTS = [
    ("claude-code.mcp.json", "mcpServers"),
    ("claude_desktop_config.json", "mcpServers"),
    ("cursor-mcp.json", "mcpServers"),
    ("vscode-mcp.json", "servers"),
]


@pytest.mark.parametrize("file,key", CLIENTS)
def test_each_client_configuration_starts_a_working_server(file: str, key: str) -> None:
    entry = json.loads((EXAMPLES / file).read_text())[key]["webfetch"]
    assert entry.get("type", "stdio") == "stdio"
    assert Path(entry["command"]).name == "webfetch"
    params = StdioServerParameters(command=binary(), args=entry["args"])

    async def run() -> list[str]:
        async with Client(params) as client:
            return [tool.name for tool in (await client.list_tools()).tools]

    # The session's start, its tool list and its end (the child's exit), bounded.
    assert run_within(f"an MCP session started as {file} says", run()) == [
        "web_fetch",
        "web_fetch_batch",
    ]
