"""The web process's listening socket: what asyncio makes of the connections it accepts."""

from __future__ import annotations

import asyncio
import socket
import threading

from workers.web import bind


def test_accepted_connections_write_without_nagle_delay() -> None:
    """asyncio sets TCP_NODELAY only on sockets created as IPPROTO_TCP; without it each small write
    (an SSE token, a response's last segment) can wait ~40 ms for the client's delayed ACK."""
    listening = bind("127.0.0.1", 0)
    port = listening.getsockname()[1]

    async def scenario() -> int:
        accepted: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connection(_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(on_connection, sock=listening)
        async with server:
            _reader, writer = await asyncio.open_connection("127.0.0.1", port)
            nodelay = await asyncio.wait_for(accepted, 5)
            writer.close()
            return nodelay

    # Its own thread: after the browser tests Playwright holds this thread's event loop.
    results: list[int] = []
    thread = threading.Thread(target=lambda: results.append(asyncio.run(scenario())))
    thread.start()
    thread.join(10)
    assert results and results[0] != 0
