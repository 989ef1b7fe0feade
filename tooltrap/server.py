"""``tooltrap serve``: one env id over the OpenEnv protocol, for trainers that reach envs over the network
(TRL's OpenEnv path, SkyRL, NeMo-Gym's OpenEnv resource server, torchforge, verifiers' ``OpenEnvEnv``).

The wire format is OpenEnv's (``openenv`` 0.10 / ``openenv-core`` 0.3; its own client works against it):

* ``/ws`` (WebSocket): one episode per connection, on an env of its own (``gym.make(ENV_ID, **kwargs)``).
  The client sends ``{"type": "reset", "data": {...}}``, ``{"type": "step", "data": ACTION}``,
  ``{"type": "state"}`` or ``{"type": "close"}``; the server answers ``{"type": "observation", "data":
  RESULT}``, ``{"type": "state", "data": STATE}`` or ``{"type": "error", "data": {"code": ..., "message":
  ...}}``. A session ends with the connection, after ``session_timeout`` seconds without a message
  (a ``SESSION_TIMEOUT`` error, then the close), or on a frame over ``max_message_bytes`` (a
  ``MESSAGE_TOO_LARGE`` error, then close code 1009; a frame past twice the cap is refused by the
  WebSocket layer itself, close code 1009, before its payload is read). Past ``max_sessions`` open
  sessions a new connection gets ``CAPACITY_REACHED`` and is closed at once.
* reset ``data``: ``seed`` (an int >= 0), ``episode_id`` (a str, echoed in the state), and the env's reset
  options (``task_id``, ``task_index``, variant keys ...) either at the top level, as OpenEnv clients send
  ``reset(**kwargs)``, or under ``options``, as gymnasium spells them.
* ``ACTION``: ``{"text": "<action text>"}`` (exactly what ``env.step`` takes: one JSON tool call, a JSON
  list of them, or anything else, which the env answers with a ``parse_error`` observation), or one tool
  call as an object, ``{"name": ..., "arguments": {...}}`` (what a model's reply decodes to), encoded as
  :meth:`tooltrap.envs.core.ToolCall.to_action` does. ``metadata`` (OpenEnv's) is accepted and ignored.
* ``RESULT``: ``{"observation": {"text": OBS, "metadata": META}, "reward": R, "done": D, "metadata":
  META}``: OBS is the env's observation text, R its reward (``null`` at reset), D ``terminated or
  truncated``, and META ``{"info": INFO, "terminated": ..., "truncated": ...}`` with INFO the step's
  info as the env returned it (the tools and messages at reset; the verdict and ``reward_components`` on
  the final step). META appears twice as in OpenEnv 0.10 (older clients read only the observation).
  The episode variant is privileged and never sent while the episode runs (it is part of the final
  verdict, as in process).
* HTTP, stateless as OpenEnv defines them (each request builds a fresh env and closes it): ``POST /reset``
  (the reset data as its body; the ``RESULT`` of a fresh reset), ``POST /step`` (``{"action": ACTION}``;
  a fresh env has no episode, so a valid action is answered ``409 NOT_RESET``: episodes live on
  ``/ws``), ``GET /state``, ``GET /schema`` (the action, observation and state JSON schemas, and
  ``tools``: the env's tool schemas, every task's), ``GET /metadata``, ``GET /health``; and ``GET
  /capacity`` (open sessions and envs, the cap, counts of sessions served, refused and reaped).

Every error is JSON, ``{"type": "error", "data": {"code": CODE, "message": ...}}`` (an HTTP error with the
matching status), never a traceback; codes are OpenEnv's ``WSErrorCode`` values plus ``MESSAGE_TOO_LARGE``,
``NOT_RESET``, ``EPISODE_DONE``, ``SESSION_TIMEOUT`` and ``NOT_FOUND``. A bad message leaves the session
as it was. Env work runs on one worker thread, in arrival order: the envs are plain Python, so more
threads would only contend for the GIL, and the event loop stays free to accept, time out and refuse.

fastapi and uvicorn are the ``server`` extra: ``pip install 'tooltrap[server]'``.
"""

import asyncio
import contextlib
import json
import logging
import math
import socket
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from tooltrap.envs.core import EnvUsageError, ToolCall, TooltrapError, make_safe

#: defaults of ``tooltrap serve``'s options
DEFAULT_MAX_SESSIONS = 64
DEFAULT_SESSION_TIMEOUT = 300.0
#: a step's action is at most 32,768 characters (``MAX_ACTION_CHARS``): 1 MiB holds any of them, escaped
DEFAULT_MAX_MESSAGE_BYTES = 1 << 20
#: a frame past this multiple of the cap is refused by the WebSocket layer before its payload is read
PROTOCOL_CEILING_FACTOR = 2
#: OpenEnv bounds a client's episode id to 255 characters
MAX_EPISODE_ID_CHARS = 255
#: how much of a client's unknown value an error message quotes
_QUOTE_CHARS = 80

#: the logger of server-side tracebacks (a bug in an env): they stay in the server's log
log = logging.getLogger("tooltrap.server")


class Code:
    """Error codes: OpenEnv's ``WSErrorCode`` values, then tooltrap's."""

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"
    MESSAGE_TOO_LARGE = "MESSAGE_TOO_LARGE"
    NOT_RESET = "NOT_RESET"
    EPISODE_DONE = "EPISODE_DONE"
    SESSION_TIMEOUT = "SESSION_TIMEOUT"
    NOT_FOUND = "NOT_FOUND"


#: the HTTP status of each code
HTTP_STATUS = {
    Code.INVALID_JSON: 400,
    Code.UNKNOWN_TYPE: 400,
    Code.VALIDATION_ERROR: 422,
    Code.EXECUTION_ERROR: 500,
    Code.CAPACITY_REACHED: 503,
    Code.FACTORY_ERROR: 500,
    Code.SESSION_ERROR: 400,
    Code.MESSAGE_TOO_LARGE: 413,
    Code.NOT_RESET: 409,
    Code.EPISODE_DONE: 409,
    Code.SESSION_TIMEOUT: 408,
    Code.NOT_FOUND: 404,
}


class ProtocolError(Exception):
    """A message the server refuses: its code, the message sent, and extra fields for the error's data."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code, self.message, self.details = code, message, details

    def payload(self) -> dict[str, Any]:
        return error_payload(self.code, self.message, **self.details)


def error_payload(code: str, message: str, **details: Any) -> dict[str, Any]:
    """The error message: OpenEnv's ``WSErrorResponse`` (``type`` "error", ``data`` with code and message)."""
    return {"type": "error", "data": {"message": message, "code": code, **details}}


def _quote(value: Any) -> str:
    """A client's value for an error message, cut short: an error never echoes a megabyte back."""
    text = repr(value)
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS] + "...'"


def encode(message: Mapping[str, Any]) -> str:
    """A message as the JSON text sent: UTF-8 always encodes it (a lone surrogate from anywhere becomes
    U+FFFD: :func:`tooltrap.envs.core.make_safe`)."""
    return make_safe(json.dumps(message, ensure_ascii=False))[0]


def decode(raw: str | bytes) -> Any:
    """A client's frame or body as JSON; malformed text (also numbers past Python's digit limit and
    nesting too deep) raises ``INVALID_JSON``."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ProtocolError(Code.INVALID_JSON, f"Invalid JSON: {reason[:200]}") from None


def _check_keys(where: str, given: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    extra = [k for k in given if k not in allowed]
    if extra:
        raise ProtocolError(
            Code.VALIDATION_ERROR,
            f"{where} has unknown field {_quote(extra[0])}; its fields: {', '.join(allowed)}",
        )


def reset_arguments(data: Any) -> tuple[int | None, str | None, dict[str, Any]]:
    """A reset's ``data`` as ``(seed, episode_id, options)``: the reset options are the top-level keys
    other than ``seed`` and ``episode_id`` (OpenEnv's ``reset(**kwargs)``) merged with ``options``
    (gymnasium's ``reset(options=...)``); a key given both ways is an error. The env checks the options
    themselves (unknown names and values are its typed errors)."""
    if not isinstance(data, dict):
        raise ProtocolError(Code.VALIDATION_ERROR, f"reset data must be an object, got {_quote(data)}")
    options = {k: v for k, v in data.items() if k not in ("seed", "episode_id", "options")}
    nested = data.get("options")
    if nested is not None:
        if not isinstance(nested, dict):
            raise ProtocolError(
                Code.VALIDATION_ERROR, f"reset options must be an object, got {_quote(nested)}"
            )
        both = sorted(set(nested) & set(options))
        if both:
            raise ProtocolError(
                Code.VALIDATION_ERROR, f"reset option {both[0]!r} given twice (top level and options)"
            )
        options.update(nested)
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ProtocolError(
            Code.VALIDATION_ERROR, f"seed must be a whole number >= 0 or null, got {_quote(seed)}"
        )
    episode_id = data.get("episode_id")
    if episode_id is not None and (not isinstance(episode_id, str) or len(episode_id) > MAX_EPISODE_ID_CHARS):
        raise ProtocolError(
            Code.VALIDATION_ERROR,
            f"episode_id must be a string of at most {MAX_EPISODE_ID_CHARS} characters, got {_quote(episode_id)}",
        )
    return seed, episode_id, options


def action_text(data: Any) -> str:
    """A step's ``data`` (an action object) as the text ``env.step`` takes: ``text`` verbatim, or the tool
    call ``{"name", "arguments"}`` encoded as :meth:`~tooltrap.envs.core.ToolCall.to_action` does."""
    if not isinstance(data, dict):
        raise ProtocolError(Code.VALIDATION_ERROR, f"step data must be an action object, got {_quote(data)}")
    _check_keys("the action", data, ("text", "name", "arguments", "metadata"))
    if "text" in data:
        if "name" in data or "arguments" in data:
            raise ProtocolError(
                Code.VALIDATION_ERROR, "an action has either text or name/arguments, not both"
            )
        if not isinstance(data["text"], str):
            raise ProtocolError(
                Code.VALIDATION_ERROR, f"the action's text must be a string, got {_quote(data['text'])}"
            )
        return data["text"]
    if "name" not in data:
        raise ProtocolError(
            Code.VALIDATION_ERROR,
            'an action is {"text": "<action text>"} or {"name": "<tool>", "arguments": {...}}',
        )
    name, arguments = data["name"], data.get("arguments", {})
    if not isinstance(name, str) or not isinstance(arguments, dict):
        raise ProtocolError(
            Code.VALIDATION_ERROR,
            f"a tool call's name is a string and its arguments an object, got {_quote(name)} and {_quote(arguments)}",
        )
    return ToolCall.model_construct(name=name, arguments=arguments).to_action()


def result_data(
    observation: str, reward: float | None, terminated: bool, truncated: bool, info: dict[str, Any]
) -> dict[str, Any]:
    """The ``data`` of an observation message (and the body of ``POST /reset``): OpenEnv's serialized
    observation, the step's info in ``metadata`` (see the module doc)."""
    metadata = {"info": info, "terminated": bool(terminated), "truncated": bool(truncated)}
    return {
        "observation": {"text": observation, "metadata": metadata},
        "reward": None if reward is None else float(reward),
        "done": bool(terminated or truncated),
        "metadata": metadata,
    }


# -- the JSON schemas /schema serves -------------------------------------------------------------------
ACTION_SCHEMA: dict[str, Any] = {
    "title": "ToolTrapAction",
    "description": 'The env\'s action: {"text": "<action text>"} (one JSON tool call, a JSON list of them; '
    'sent to env.step verbatim) or one tool call as an object {"name": ..., "arguments": {...}}.',
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the action text env.step takes"},
        "name": {"type": "string", "description": "a tool's name (see tools)"},
        "arguments": {"type": "object", "description": "the tool call's arguments"},
        "metadata": {"type": "object", "description": "ignored"},
    },
    "anyOf": [{"required": ["text"]}, {"required": ["name"]}],
    "additionalProperties": False,
}
_METADATA_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "info": {"type": "object", "description": "the step's info, as env.reset/env.step return it"},
        "terminated": {"type": "boolean"},
        "truncated": {"type": "boolean"},
    },
}
OBSERVATION_SCHEMA: dict[str, Any] = {
    "title": "ToolTrapObservation",
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "the env's observation text"},
        "metadata": _METADATA_SCHEMA,
        "reward": {"type": ["number", "null"]},
        "done": {"type": "boolean"},
    },
    "required": ["text"],
}
STATE_SCHEMA: dict[str, Any] = {
    "title": "ToolTrapState",
    "type": "object",
    "properties": {
        "episode_id": {"type": ["string", "null"]},
        "step_count": {"type": "integer", "minimum": 0},
        "task_id": {"type": ["string", "null"]},
        "done": {"type": "boolean"},
    },
}


# -- sessions ------------------------------------------------------------------------------------------
@dataclass
class Episode:
    """One connection's env and where its episode stands."""

    env: Any
    episode_id: str | None = None
    task_id: str | None = None
    step_count: int = 0
    started: bool = False
    done: bool = False

    def state(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "step_count": self.step_count,
            "task_id": self.task_id,
            "done": self.done,
        }

    def reset(self, data: Any) -> dict[str, Any]:
        seed, episode_id, options = reset_arguments(data)
        try:
            observation, info = self.env.reset(seed=seed, options=options)
        except TooltrapError as exc:
            # the episode before stays as it was: a failed reset is a refused message
            raise ProtocolError(Code.VALIDATION_ERROR, str(exc), error=type(exc).__name__) from None
        self.episode_id, self.task_id = episode_id, info.get("task_id")
        self.step_count, self.started, self.done = 0, True, False
        return result_data(observation, None, False, False, info)

    def step(self, data: Any) -> dict[str, Any]:
        action = action_text(data)
        if not self.started:
            raise ProtocolError(Code.NOT_RESET, "step before reset: send a reset first")
        if self.done:
            raise ProtocolError(Code.EPISODE_DONE, "the episode has ended: send a reset to start another")
        try:
            observation, reward, terminated, truncated, info = self.env.step(action)
        except TooltrapError as exc:
            raise ProtocolError(Code.VALIDATION_ERROR, str(exc), error=type(exc).__name__) from None
        self.step_count += 1
        self.done = bool(terminated or truncated)
        return result_data(observation, reward, terminated, truncated, info)


def handle(episode: Episode, message: Any) -> dict[str, Any] | None:
    """One decoded client message against ``episode``: the reply, or None for ``close``. Refusals raise
    :class:`ProtocolError` (the episode unchanged)."""
    if not isinstance(message, dict):
        raise ProtocolError(
            Code.VALIDATION_ERROR,
            f'a message is an object {{"type": ..., "data": ...}}, got {_quote(message)}',
        )
    kind = message.get("type", "")
    if kind == "reset":
        _check_keys("a reset message", message, ("type", "data"))
        return {"type": "observation", "data": episode.reset(message.get("data", {}))}
    if kind == "step":
        _check_keys("a step message", message, ("type", "data"))
        if "data" not in message:
            raise ProtocolError(Code.VALIDATION_ERROR, "a step message needs data: the action")
        return {"type": "observation", "data": episode.step(message["data"])}
    if kind == "state":
        _check_keys("a state message", message, ("type",))
        return {"type": "state", "data": episode.state()}
    if kind == "close":
        _check_keys("a close message", message, ("type",))
        return None
    raise ProtocolError(
        Code.UNKNOWN_TYPE, f"Unknown message type: {_quote(kind)} (reset, step, state, close)"
    )


@dataclass
class Counters:
    """What ``GET /capacity`` reports."""

    max_sessions: int
    active_sessions: int = 0
    envs_open: int = 0
    sessions_total: int = 0
    sessions_refused: int = 0
    sessions_reaped: int = 0
    oversized_frames: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class ServerConfig:
    """What one server serves and its limits (``tooltrap serve``'s options)."""

    env_id: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    max_sessions: int = DEFAULT_MAX_SESSIONS
    session_timeout: float = DEFAULT_SESSION_TIMEOUT
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES

    def __post_init__(self) -> None:
        if (
            isinstance(self.max_sessions, bool)
            or not isinstance(self.max_sessions, int)
            or self.max_sessions < 1
        ):
            raise EnvUsageError(f"max_sessions must be a whole number >= 1, got {self.max_sessions!r}")
        timeout = self.session_timeout
        if (
            isinstance(timeout, bool)
            or not isinstance(timeout, int | float)
            or not (math.isfinite(timeout) and timeout > 0)
        ):
            raise EnvUsageError(f"session_timeout must be a number of seconds > 0, got {timeout!r}")
        size = self.max_message_bytes
        if isinstance(size, bool) or not isinstance(size, int) or size < 1024:
            raise EnvUsageError(f"max_message_bytes must be a whole number >= 1024, got {size!r}")


def _fastapi() -> Any:
    try:
        import fastapi
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise EnvUsageError(
            f"tooltrap serve needs the server extra ({exc.name} is missing): pip install 'tooltrap[server]'"
        ) from None
    return fastapi


def make_env_factory(env_id: str, env_kwargs: Mapping[str, Any]) -> Callable[[], Any]:
    """A function that builds one env (``gym.make(env_id, **env_kwargs)``), checked once here: an unknown
    id or kwarg raises the typed error now, not in a session."""
    import gymnasium as gym

    from tooltrap import check_env_id

    check_env_id(env_id)
    kwargs = dict(env_kwargs)

    def make() -> Any:
        return gym.make(env_id, **kwargs)

    make().close()
    return make


def tool_catalog(make_env: Callable[[], Any]) -> list[dict[str, Any]]:
    """Every tool schema the env's tasks use (a task's tools depend on it; each reset's
    ``info["tools"]`` is that episode's list), in first-seen order, one per name."""
    env = make_env()
    try:
        unwrapped = env.unwrapped
        ids = list(getattr(getattr(unwrapped, "tasks", None), "ids", None) or [])
        seen: dict[str, dict[str, Any]] = {}
        for task_id in ids or [None]:
            _, info = env.reset(seed=0, options={"task_id": task_id} if task_id is not None else None)
            for schema in info.get("tools", []):
                name = schema.get("function", {}).get("name") or schema.get("name")
                seen.setdefault(str(name), schema)
        return list(seen.values())
    finally:
        env.close()


def describe_env(env_id: str, make_env: Callable[[], Any]) -> dict[str, Any]:
    """``GET /metadata``: OpenEnv's ``EnvironmentMetadata`` fields."""
    from tooltrap import __version__

    env = make_env()
    try:
        doc = (type(env.unwrapped).__doc__ or "").strip()
    finally:
        env.close()
    return {
        "name": env_id,
        "description": doc.split("\n\n")[0].replace("\n", " ") or f"tooltrap env {env_id}",
        "readme_content": None,
        "version": __version__,
        "author": "tooltrap",
        "documentation_url": None,
    }


def create_app(config: ServerConfig) -> Any:
    """The FastAPI app serving ``config.env_id`` (see the module doc). Builds one env now, so an unknown
    env id or kwarg raises its typed error here."""
    fastapi = _fastapi()
    from fastapi import Request
    from fastapi.responses import Response
    from starlette.exceptions import HTTPException
    from starlette.websockets import WebSocket, WebSocketDisconnect

    make_env = make_env_factory(config.env_id, config.env_kwargs)
    tools = tool_catalog(make_env)
    metadata = describe_env(config.env_id, make_env)
    counters = Counters(max_sessions=config.max_sessions)
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tooltrap-env")

    async def on_worker(function: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(worker, function, *args)

    def open_env() -> Any:
        env = make_env()
        counters.envs_open += 1
        return env

    def close_env(env: Any) -> None:
        try:
            env.close()
        finally:
            counters.envs_open -= 1

    def reply(payload: Mapping[str, Any], status: int = 200) -> Response:
        return Response(encode(payload), status_code=status, media_type="application/json")

    def refuse(error: ProtocolError) -> Response:
        return reply(error.payload(), HTTP_STATUS.get(error.code, 400))

    def guarded(function: Callable[..., Any], *args: Any) -> Any:
        """Run env work; an exception that is not a refusal (a bug in an env) is logged here and sent as
        ``EXECUTION_ERROR`` with its type and first line, never its traceback."""
        try:
            return function(*args)
        except ProtocolError:
            raise
        except Exception as exc:
            log.exception("env error")
            first = str(exc).splitlines()[0][:200] if str(exc) else ""
            raise ProtocolError(Code.EXECUTION_ERROR, f"{type(exc).__name__}: {first}") from None

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        yield
        worker.shutdown(wait=False, cancel_futures=True)

    app = fastapi.FastAPI(title=f"tooltrap: {config.env_id}", version=metadata["version"], lifespan=lifespan)

    @app.exception_handler(HTTPException)
    async def http_error(request: Any, exc: HTTPException) -> Response:
        code = Code.NOT_FOUND if exc.status_code == 404 else Code.VALIDATION_ERROR
        return reply(
            error_payload(code, f"{request.method} {request.url.path}: {exc.detail}"), exc.status_code
        )

    async def read_body(request: Any) -> Any:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > config.max_message_bytes):
            raise ProtocolError(Code.MESSAGE_TOO_LARGE, f"the body is over {config.max_message_bytes} bytes")
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > config.max_message_bytes:
                raise ProtocolError(
                    Code.MESSAGE_TOO_LARGE, f"the body is over {config.max_message_bytes} bytes"
                )
            chunks.append(chunk)
        body = b"".join(chunks)
        return decode(make_safe(body)[0]) if body.strip() else {}

    def fresh_episode(work: Callable[[Episode], Any]) -> Callable[[], Any]:
        def run() -> Any:
            env = open_env()
            try:
                return guarded(work, Episode(env))
            finally:
                close_env(env)

        return run

    @app.post("/reset")
    async def http_reset(request: Request) -> Response:
        try:
            data = await read_body(request)
            return reply(await on_worker(fresh_episode(lambda e: e.reset(data))))
        except ProtocolError as error:
            return refuse(error)

    @app.post("/step")
    async def http_step(request: Request) -> Response:
        try:
            body = await read_body(request)
            if not isinstance(body, dict) or "action" not in body:
                raise ProtocolError(Code.VALIDATION_ERROR, 'the body is {"action": {...}}')
            _check_keys("the step body", body, ("action", "timeout_s", "request_id"))
            return reply(await on_worker(fresh_episode(lambda e: e.step(body["action"]))))
        except ProtocolError as error:
            if error.code == Code.NOT_RESET:
                error.message = (
                    "POST /step builds a fresh env (OpenEnv's stateless route): episodes live on /ws"
                )
            return refuse(error)

    @app.get("/state")
    async def http_state() -> Response:
        try:
            return reply(await on_worker(fresh_episode(lambda e: e.state())))
        except ProtocolError as error:
            return refuse(error)

    @app.get("/schema")
    async def http_schema() -> Response:
        return reply(
            {
                "action": ACTION_SCHEMA,
                "observation": OBSERVATION_SCHEMA,
                "state": STATE_SCHEMA,
                "tools": tools,
            }
        )

    @app.get("/metadata")
    async def http_metadata() -> Response:
        return reply(metadata)

    @app.get("/health")
    async def http_health() -> Response:
        return reply({"status": "healthy"})

    @app.get("/capacity")
    async def http_capacity() -> Response:
        return reply(counters.as_dict())

    @app.websocket("/ws")
    async def ws(websocket: WebSocket) -> None:
        await websocket.accept()

        async def send(payload: Mapping[str, Any]) -> None:
            await websocket.send_text(encode(payload))

        async def end(error: ProtocolError | None = None, code: int = 1000) -> None:
            """Say why (when there is a why) and close; a client already gone is no error."""
            try:
                if error is not None:
                    await send(error.payload())
                await websocket.close(code)
            except (WebSocketDisconnect, RuntimeError, OSError):
                pass

        requested = websocket.query_params.get("session_id")
        if requested is not None:
            # sessions are connections: there is no session to attach to (OpenEnv's message)
            await end(ProtocolError(Code.SESSION_ERROR, f"Unknown session_id: {requested[:_QUOTE_CHARS]}"))
            return
        if counters.active_sessions >= config.max_sessions:
            counters.sessions_refused += 1
            await end(
                ProtocolError(
                    Code.CAPACITY_REACHED,
                    f"Server at capacity: {counters.active_sessions}/{config.max_sessions} sessions active. "
                    "Cannot accept new connections.",
                    active_sessions=counters.active_sessions,
                    max_sessions=config.max_sessions,
                )
            )
            return
        counters.active_sessions += 1
        counters.sessions_total += 1
        env = None
        # why the session ends, said once its slot and env are released: a client that reconnects as
        # soon as it sees the close finds the slot free
        closing: tuple[ProtocolError | None, int] | None = None
        try:
            try:
                env = await on_worker(open_env)
            except Exception as exc:
                log.exception("env factory error")
                error = f"{config.env_id} could not be built: {type(exc).__name__}"
                closing = (ProtocolError(Code.FACTORY_ERROR, error), 1000)
                return
            episode = Episode(env)
            byte_cap = config.max_message_bytes
            while True:
                try:
                    message = await asyncio.wait_for(websocket.receive(), config.session_timeout)
                except TimeoutError:
                    counters.sessions_reaped += 1
                    idle = f"no message for {config.session_timeout:g} s: the session is closed; connect again and reset"
                    closing = (ProtocolError(Code.SESSION_TIMEOUT, idle), 1000)
                    return
                if message["type"] == "websocket.disconnect":
                    return
                raw = message.get("text")
                if raw is None:
                    raw = message.get("bytes") or b""
                # a str of n characters is n to 4n bytes in UTF-8: count exactly only when it matters
                if len(raw) > byte_cap or (
                    isinstance(raw, str)
                    and 4 * len(raw) > byte_cap
                    and len(raw.encode("utf-8", "surrogatepass")) > byte_cap
                ):
                    counters.oversized_frames += 1
                    closing = (
                        ProtocolError(Code.MESSAGE_TOO_LARGE, f"a message is at most {byte_cap} bytes"),
                        1009,
                    )
                    return
                try:
                    decoded = decode(raw if isinstance(raw, str) else make_safe(raw)[0])
                    answer = await on_worker(guarded, handle, episode, decoded)
                except ProtocolError as error:
                    answer = error.payload()
                if answer is None:  # close
                    closing = (None, 1000)
                    return
                await send(answer)
        except (WebSocketDisconnect, OSError):
            pass  # the client went away mid-episode: its env is freed below
        finally:
            counters.active_sessions -= 1
            if env is not None:
                await on_worker(close_env, env)
            if closing is not None:
                await end(*closing)

    return app


def serve(
    config: ServerConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    fd: int | None = None,
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
) -> None:
    """Serve ``config`` until interrupted, on ``host:port`` or on the listening socket ``fd`` (handed over
    by a supervisor or a test, so that no port race is possible). ``on_ready`` is called with the base
    URL once the server accepts connections."""
    _fastapi()
    import uvicorn

    app = create_app(config)
    sock = socket.socket(fileno=fd) if fd is not None else None

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets=sockets)
            if on_ready is not None and self.started:
                bound = (sockets or [s for srv in self.servers for s in srv.sockets])[0].getsockname()
                on_ready(f"http://{bound[0]}:{bound[1]}")

    uv_config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level=log_level,
        ws="websockets-sansio",
        ws_max_size=config.max_message_bytes * PROTOCOL_CEILING_FACTOR,
        lifespan="on",
    )
    server = Server(uv_config)
    if sock is not None:
        server.run(sockets=[sock])
    else:
        server.run()
    if not server.started:
        print(f"error: could not serve on {host}:{port}", file=sys.stderr)
