"""Run a test server (tests/llm_server.py, tests/hostile_server.py) so that its parent knows when it is
ready, without a time budget: the parent binds the loopback socket and hands it over (no port race),
and the server prints :data:`READY` on stdout once it accepts requests (:func:`tests.conftest.start_server`
waits for that line, or for the process to end)."""

from __future__ import annotations

import socket
from typing import Any

import uvicorn

#: the line a server prints once it accepts requests
READY = "ready"


class _ReadyServer(uvicorn.Server):
    """uvicorn's server, saying when it has started."""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        print(READY, flush=True)


def serve(app: Any, where: str) -> None:
    """Serve ``app`` on ``where``: ``fd:N`` (a listening socket inherited from the parent) or a port on
    127.0.0.1 (scripts that run a server by hand)."""
    if where.startswith("fd:"):
        server = _ReadyServer(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[socket.socket(fileno=int(where[3:]))])
    else:
        _ReadyServer(uvicorn.Config(app, host="127.0.0.1", port=int(where), log_level="warning")).run()
