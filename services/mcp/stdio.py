"""``obsirag mcp``'s stdin and stdout as asyncio pipes under the SDK's stdio transport.

The SDK reads each line and writes (then flushes) each answer in a worker thread: three thread hops a
call, each a wake-up that a loaded machine makes wait for a core. Here the event loop reads and writes
the pipes itself. As the SDK does, fd 0 then reads the null device and fd 1 goes to stderr, so that a
stray ``print`` cannot corrupt the protocol. Neither a pipe nor a socket (a file, a terminal): the SDK's own transport.
"""

from __future__ import annotations

import asyncio
import os
import stat
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

LINE_LIMIT = 64 * 1024 * 1024  # one JSON-RPC message a line; asyncio's default (64 KiB) is below a long note


class PipeLines:
    """The messages on stdin, one a line, as the SDK's ``stdin`` iterates them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class PipeWriter:
    """stdout as the SDK's ``stdout`` writes to it: ``write`` then ``flush`` (waits while the pipe is full)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


async def serve_stdio(server: MCPServer) -> None:
    """Serve one client on this process's stdin and stdout until it hangs up."""
    if not all(_is_pipe(fd) for fd in (0, 1)):
        await server.run_stdio_async()
        return
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    stdin = os.fdopen(_divert(0, os.open(os.devnull, os.O_RDONLY)), "rb", buffering=0)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    stdout = os.fdopen(_divert(1, os.dup(2)), "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    lowlevel: Any = server._lowlevel_server  # what the SDK's run_stdio_async runs, over our streams
    try:
        async with stdio_server(stdin=PipeLines(reader), stdout=PipeWriter(writer)) as (incoming, outgoing):  # type: ignore[arg-type]
            await lowlevel.run(incoming, outgoing, lowlevel.create_initialization_options())
    finally:
        transport.close()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)  # what epoll can watch; a terminal is left to the SDK


def _divert(fd: int, diversion: int) -> int:
    """A private copy of ``fd`` for the protocol, ``fd`` itself pointed at ``diversion``."""
    private = os.dup(fd)  # not inherited by children (PEP 446)
    os.dup2(diversion, fd)
    os.close(diversion)
    return private
