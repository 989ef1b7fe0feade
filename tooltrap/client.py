"""A small synchronous client of ``tooltrap serve`` (or any server speaking its OpenEnv dialect).

    from tooltrap.client import Client

    with Client("http://127.0.0.1:8000") as env:        # one WebSocket session: one env on the server
        result = env.reset(seed=0, task_id="cal-...")   # reset options as keywords
        result.observation, result.info["tools"]
        result = env.step('{"name": "calendar_list_events", "arguments": {}}')   # the env's action text
        result = env.step({"name": "respond", "arguments": {"message": "Done."}})  # or one tool call
        result.reward, result.terminated, result.info["verdict"]

The stateless HTTP routes are methods too (``health``, ``schema``, ``metadata``, ``capacity``). A refusal
by the server raises :class:`ServerError` with its code (``NOT_RESET``, ``EPISODE_DONE``,
``CAPACITY_REACHED`` ...); the session is still usable after any refusal that did not close it
(``ServerError.closed`` says). Needs the ``server`` extra (websockets, httpx).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tooltrap.envs.core import EnvUsageError, TooltrapError

#: the largest message the client reads (the server's default cap is 1 MiB; observations are bounded)
DEFAULT_MAX_MESSAGE_BYTES = 16 << 20


class ServerError(TooltrapError):
    """The server refused a message, or the session ended: ``code`` (the server's error code, or
    ``CONNECTION_CLOSED``), ``message`` and whether the session is ``closed``."""

    def __init__(
        self, code: str, message: str, *, closed: bool = False, data: Mapping[str, Any] | None = None
    ):
        super().__init__(f"{code}: {message}")
        self.code, self.message, self.closed, self.data = code, message, closed, dict(data or {})


@dataclass(frozen=True)
class StepResult:
    """One reset's or step's result: what ``env.reset``/``env.step`` returned in process."""

    observation: str
    reward: float | None
    terminated: bool
    truncated: bool
    info: dict[str, Any]

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> StepResult:
        """From an observation message's ``data`` (or ``POST /reset``'s body)."""
        metadata = data.get("metadata") or data.get("observation", {}).get("metadata") or {}
        return cls(
            observation=data["observation"]["text"],
            reward=data.get("reward"),
            terminated=bool(metadata.get("terminated", data.get("done", False))),
            truncated=bool(metadata.get("truncated", False)),
            info=metadata.get("info", {}),
        )


def _extra() -> tuple[Any, Any]:
    try:
        import httpx
        from websockets.sync import client as ws_client
    except ImportError as exc:
        raise EnvUsageError(
            f"tooltrap.client needs the server extra ({exc.name} is missing): pip install 'tooltrap[server]'"
        ) from None
    return httpx, ws_client


class Client:
    """One session with a server at ``base_url`` (``http://`` or ``ws://``; the WebSocket is ``/ws``),
    opened on first use and closed by :meth:`close` or the ``with`` block. ``timeout`` bounds connecting
    and every reply, in seconds."""

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8000",
        *,
        timeout: float = 60.0,
        max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    ) -> None:
        self._httpx, self._ws_client = _extra()
        root = base_url.rstrip("/")
        for scheme, http in (("ws://", "http://"), ("wss://", "https://")):
            if root.startswith(scheme):
                root = http + root[len(scheme) :]
        if not root.startswith(("http://", "https://")):
            raise EnvUsageError(
                f"base_url must start with http://, https://, ws:// or wss://, got {base_url!r}"
            )
        self.base_url = root
        self.ws_url = "ws" + root[len("http") :] + "/ws"
        self.timeout = timeout
        self.max_message_bytes = max_message_bytes
        self._ws: Any = None

    # -- the session -------------------------------------------------------------------------------
    def connect(self) -> Client:
        if self._ws is None:
            try:
                # entered as a context manager: what every websockets version returns supports it
                # (a connection, or a connecter whose __enter__ connects), without a deprecation warning
                self._ws = self._ws_client.connect(
                    self.ws_url, open_timeout=self.timeout, max_size=self.max_message_bytes
                ).__enter__()
            except (OSError, TimeoutError, self._websockets_error()) as exc:
                raise ServerError("CONNECTION_FAILED", f"{self.ws_url}: {exc}", closed=True) from None
        return self

    def reset(self, *, seed: int | None = None, episode_id: str | None = None, **options: Any) -> StepResult:
        """Start an episode: ``seed``, an ``episode_id`` (echoed in :meth:`state`) and the env's reset
        options (``task_id=``, ``task_index=``, variant keys ...)."""
        data: dict[str, Any] = dict(options)
        if seed is not None:
            data["seed"] = seed
        if episode_id is not None:
            data["episode_id"] = episode_id
        return StepResult.from_data(self._exchange({"type": "reset", "data": data}, "observation"))

    def step(self, action: str | Mapping[str, Any]) -> StepResult:
        """One step: the env's action text (a JSON tool call or a list of them, as ``env.step`` takes),
        or one tool call as a mapping ``{"name": ..., "arguments": {...}}``."""
        data = {"text": action} if isinstance(action, str) else dict(action)
        return StepResult.from_data(self._exchange({"type": "step", "data": data}, "observation"))

    def state(self) -> dict[str, Any]:
        """The session's state: ``episode_id``, ``step_count``, ``task_id``, ``done``."""
        return self._exchange({"type": "state"}, "state")

    def send_raw(self, text: str | bytes) -> dict[str, Any]:
        """Send one frame as it is and return the decoded reply, an error included (for probing a
        server; :meth:`reset` and :meth:`step` are the way to play)."""
        self.connect()
        # a server that refuses a session (at capacity) says why, then closes: the send may fail, the
        # reason is still there to read
        with contextlib.suppress(self._websockets_closed()):
            self._ws.send(text)
        try:
            return json.loads(self._ws.recv(timeout=self.timeout))
        except self._websockets_closed() as exc:
            self._drop()
            raise ServerError("CONNECTION_CLOSED", _close_reason(exc), closed=True) from None
        except TimeoutError:
            self._drop()  # a reply may still come: this connection can no longer pair replies with messages
            raise ServerError("TIMEOUT", f"no reply within {self.timeout:g} s", closed=True) from None

    def close(self) -> None:
        """End the session (the server frees its env)."""
        if self._ws is not None:
            # closing a session the server already closed is no error
            with contextlib.suppress(Exception):
                self._ws.send(json.dumps({"type": "close"}))
            self._drop()

    def __enter__(self) -> Client:
        return self.connect()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the stateless routes ----------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self._get("/health")

    def schema(self) -> dict[str, Any]:
        """The action, observation and state JSON schemas and ``tools``, the env's tool schemas."""
        return self._get("/schema")

    def metadata(self) -> dict[str, Any]:
        return self._get("/metadata")

    def capacity(self) -> dict[str, Any]:
        """Open sessions and envs, the cap, and counts of sessions served, refused and reaped."""
        return self._get("/capacity")

    # -- plumbing ------------------------------------------------------------------------------------
    def _get(self, path: str) -> dict[str, Any]:
        try:
            response = self._httpx.get(self.base_url + path, timeout=self.timeout)
        except self._httpx.HTTPError as exc:
            raise ServerError("CONNECTION_FAILED", f"{self.base_url}{path}: {exc}", closed=True) from None
        body = response.json()
        if response.status_code != 200:
            error = body.get("data", {}) if isinstance(body, dict) else {}
            raise ServerError(
                error.get("code", str(response.status_code)), error.get("message", response.text)
            )
        return body

    def _exchange(self, message: Mapping[str, Any], expected: str) -> dict[str, Any]:
        reply = self.send_raw(json.dumps(message))
        if reply.get("type") == "error":
            error = reply.get("data", {})
            closed = error.get("code") in (
                "CAPACITY_REACHED",
                "SESSION_TIMEOUT",
                "MESSAGE_TOO_LARGE",
                "SESSION_ERROR",
            )
            if closed:
                self._drop()
            raise ServerError(
                error.get("code", "UNKNOWN"), error.get("message", ""), closed=closed, data=error
            )
        if reply.get("type") != expected:
            raise ServerError("PROTOCOL_ERROR", f"expected a {expected} message, got {str(reply)[:200]}")
        return reply["data"]

    def _drop(self) -> None:
        with contextlib.suppress(Exception):  # the socket may already be gone
            self._ws.close()
        self._ws = None

    @staticmethod
    def _websockets_error() -> type[Exception]:
        from websockets.exceptions import WebSocketException

        return WebSocketException

    @staticmethod
    def _websockets_closed() -> type[Exception]:
        from websockets.exceptions import ConnectionClosed

        return ConnectionClosed


def _close_reason(exc: Any) -> str:
    close = getattr(exc, "rcvd", None)
    if close is None:
        return "the server closed the connection"
    return (
        f"the server closed the connection (code {close.code}{': ' + close.reason if close.reason else ''})"
    )
