"""One deadline over a whole HTTP exchange: connecting, sending, the status line and headers, the body.

httpx's timeouts bound each socket operation, not the exchange: a server that sends a header byte every
second never trips a 3 s read timeout and holds the request for as long as it likes. Within
:func:`request_deadline`, every connect, send and receive of this thread's requests through a
:class:`DeadlineTransport` is given at most the time left until the deadline, and one that starts after
it fails at once with httpcore's timeout (httpx's ``TimeoutException``).

The deadline is per thread: the provider's client is shared by threads that each make one request at
a time, and every socket operation of a request runs in the thread that made it.

Needs the ``llm`` extra (httpx, httpcore).
"""

from __future__ import annotations

import contextlib
import threading
import time
import typing
from collections.abc import Iterator
from typing import Any

import httpcore
import httpx

_local = threading.local()


@contextlib.contextmanager
def request_deadline(seconds: float) -> Iterator[None]:
    """Within the block, this thread's requests through a :class:`DeadlineTransport` end by ``seconds``
    from now, whatever the server drips (the per-operation timeouts still apply when shorter)."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to the time left before this thread's deadline (``error`` once it passed)."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's deadline passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every read and write is cut to the current request's deadline."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        tls = self._stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        return _DeadlineStream(tls)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's network backend whose connections honour the current request's deadline."""

    def __init__(self, backend: httpcore.NetworkBackend) -> None:
        self._backend = backend

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: typing.Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options
        )
        return _DeadlineStream(stream)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class DeadlineTransport(httpx.HTTPTransport):
    """httpx's transport (same options) whose requests honour :func:`request_deadline`.

    httpx takes no network backend, so the one of the connection pool it builds is wrapped; should a
    future httpx lay its pool out otherwise, this fails at construction, never silently.
    """

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        pool = getattr(self, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, httpcore.NetworkBackend):
            raise RuntimeError(
                f"httpx {httpx.__version__} builds its connection pool differently: the request deadline "
                "cannot be installed (tooltrap.wrappers.deadline needs updating)"
            )
        pool._network_backend = _DeadlineBackend(backend)  # type: ignore[union-attr]
