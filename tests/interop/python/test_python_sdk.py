"""Wharf driven by the official MCP Python SDK (PyPI `mcp`), over stdio and HTTP,
in each of the SDK's modes: `auto` (server/discover, 2026-07-28), `legacy`
(initialize) and a pinned `2026-07-28`.

Run by `cargo xtask test` in a virtualenv it creates; `WHARF_BIN` and
`WHARF_TEST_PLUGINS` point at the binary and the example plugins.
"""

import asyncio
import os
import pathlib
import re
import shutil
import subprocess
import threading

import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = pathlib.Path(__file__).resolve().parents[3]
WHARF = os.environ.get("WHARF_BIN", str(ROOT / "target" / "debug" / "wharf"))
PLUGINS = pathlib.Path(os.environ.get("WHARF_TEST_PLUGINS", ROOT / "target" / "plugins"))
MODES = ["auto", "legacy", "2026-07-28"]
EXAMPLE_TOOLS = [
    "calc_add",
    "calc_divide",
    "calc_evaluate",
    "calc_multiply",
    "calc_subtract",
    "echo_echo",
    "guide_search",
    "textstats_analyze",
]


def plugin_dir(tmp_path, names):
    folder = tmp_path / "plugins"
    folder.mkdir()
    for name in names:
        source = PLUGINS / f"{name}.wasm"
        assert source.is_file(), f"{source} is missing: run `cargo xtask plugins`"
        shutil.copy(source, folder / f"{name}.wasm")
    return folder


def serve_args(folder, tmp_path):
    # The SDK's stdio client does not pass the parent environment: say everything
    # on the command line.
    return ["serve", "--plugins", str(folder), "--cache-dir", str(tmp_path / "cache")]


class HttpWharf:
    """`wharf serve --http 127.0.0.1:0`, and the URL it logged."""

    def __init__(self, folder, tmp_path):
        self.process = subprocess.Popen(
            [WHARF, *serve_args(folder, tmp_path), "--http", "127.0.0.1:0"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        found = threading.Event()
        self.url = None

        def read_log():
            for line in self.process.stderr:
                match = re.search(r"listening on (http://\S+/mcp)", line)
                if match and self.url is None:
                    self.url = match.group(1)
                    found.set()

        threading.Thread(target=read_log, daemon=True).start()
        assert found.wait(60), "wharf never logged its HTTP address"

    def stop(self):
        self.process.terminate()
        self.process.wait(10)


@pytest.fixture
def examples(tmp_path):
    return plugin_dir(tmp_path, ["echo", "calc", "textstats", "guide"])


async def exercise(client):
    tools = await client.list_tools()
    assert [tool.name for tool in tools.tools] == EXAMPLE_TOOLS
    add = next(tool for tool in tools.tools if tool.name == "calc_add")
    assert add.output_schema["type"] == "object"

    result = await client.call_tool("calc_add", {"a": 2, "b": 3.5})
    assert not result.is_error
    assert result.structured_content == {"result": 5.5}

    result = await client.call_tool("echo_echo", {"text": "from python"})
    assert result.content[0].text == "from python"

    result = await client.call_tool("calc_divide", {"a": 1, "b": 0})
    assert result.is_error
    assert "zero" in result.content[0].text

    result = await client.call_tool("echo_echo", {"text": 5})
    assert result.is_error
    assert result.content[0].text.startswith("Invalid arguments for tool `echo_echo`")

    resources = await client.list_resources()
    assert [str(resource.uri) for resource in resources.resources] == ["guide+guide://readme"]
    read = await client.read_resource("guide+guide://readme/quick-start")
    assert read.contents[0].mime_type == "text/markdown"
    assert read.contents[0].text.startswith("## Quick start\n")


@pytest.mark.parametrize("mode", MODES)
def test_stdio(examples, tmp_path, mode):
    server = StdioServerParameters(command=WHARF, args=serve_args(examples, tmp_path))

    async def run():
        async with Client(server, mode=mode, read_timeout_seconds=60) as client:
            await exercise(client)

    asyncio.run(run())


@pytest.mark.parametrize("mode", MODES)
def test_http(examples, tmp_path, mode):
    wharf = HttpWharf(examples, tmp_path)
    try:

        async def run():
            async with Client(wharf.url, mode=mode, read_timeout_seconds=60) as client:
                await exercise(client)

        asyncio.run(run())
    finally:
        wharf.stop()


def test_listen_sees_a_new_plugin(tmp_path):
    folder = plugin_dir(tmp_path, ["echo"])
    server = StdioServerParameters(command=WHARF, args=serve_args(folder, tmp_path))

    async def run():
        async with Client(server, mode="2026-07-28", read_timeout_seconds=60) as client:
            async with client.listen(tools_list_changed=True) as subscription:
                partial = folder / "calc.partial"
                shutil.copy(PLUGINS / "calc.wasm", partial)
                partial.rename(folder / "calc.wasm")
                async for _event in subscription:
                    break
            tools = await client.list_tools()
            assert "calc_add" in [tool.name for tool in tools.tools]

    asyncio.run(asyncio.wait_for(run(), 60))


def test_legacy_session_is_told_of_a_new_plugin(tmp_path):
    folder = plugin_dir(tmp_path, ["echo"])
    server = StdioServerParameters(command=WHARF, args=serve_args(folder, tmp_path))
    changed = asyncio.Event()

    async def on_message(message):
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def run():
        async with Client(
            server, mode="legacy", read_timeout_seconds=60, message_handler=on_message
        ) as client:
            await client.list_tools()
            partial = folder / "calc.partial"
            shutil.copy(PLUGINS / "calc.wasm", partial)
            partial.rename(folder / "calc.wasm")
            await asyncio.wait_for(changed.wait(), 30)
            tools = await client.list_tools()
            assert "calc_add" in [tool.name for tool in tools.tools]

    asyncio.run(run())


def test_a_new_project_is_served_to_the_sdk(tmp_path):
    """`wharf new` then `wharf build` outside the repository, as a new author
    would (C: the quickest toolchain), then listed and called by this SDK."""
    subprocess.run(
        [WHARF, "new", "greeter", "--lang", "c"], cwd=tmp_path, check=True, capture_output=True
    )
    project = tmp_path / "greeter"
    subprocess.run([WHARF, "build"], cwd=project, check=True, capture_output=True)
    folder = tmp_path / "plugins"
    folder.mkdir()
    shutil.copy(project / "greeter.wasm", folder / "greeter.wasm")
    server = StdioServerParameters(command=WHARF, args=serve_args(folder, tmp_path))

    async def run():
        async with Client(server, mode="auto", read_timeout_seconds=60) as client:
            tools = await client.list_tools()
            assert [tool.name for tool in tools.tools] == ["greeter_greet"]
            assert "Greets someone by name" in tools.tools[0].description
            result = await client.call_tool("greeter_greet", {"name": "Ada"})
            assert not result.is_error
            assert result.content[0].text == "Hello, Ada!"

    asyncio.run(run())
