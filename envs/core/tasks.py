"""Tasks are data: pydantic models (extra="forbid") and loaders with errors that name file, task, field."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    WrapValidator,
    model_validator,
)

from .errors import EnvUsageError, TaskValidationError, UnknownNameError, UnknownTaskError, did_you_mean
from .state import Record, State
from .usage import (
    MAX_ROWS,
    DataLimitError,
    UnreadableFileError,
    check_json_value,
    describe,
    dotted,
    json_problem,
    loads_json,
    read_user_text,
)
from .values import Fact, ValueKind, mentions, same


class Strict(BaseModel):
    # strict: a task file saying "ambiguous": "yes" or "min": "1" is wrong, not coerced
    model_config = ConfigDict(extra="forbid", frozen=False, strict=True)


class ToolCall(Strict):
    """One tool call, as in the action JSON: ``{"name": ..., "arguments": {...}}``."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    def to_action(self) -> str:
        return json.dumps({"name": self.name, "arguments": self.arguments}, sort_keys=True)


class InitialState(Strict):
    """The world at reset: entity collections, the fixed clock and read-only context."""

    collections: dict[str, dict[str, dict[str, Any]]]
    now: str = "2026-01-05T09:00:00"
    context: dict[str, Any] = Field(default_factory=dict)


# -- goal conditions: predicates over the final state and the episode outcome -------------------------
@dataclass(slots=True)
class GoalContext:
    """What a goal condition may look at: the final state (after replaying the episode's writes), how
    the episode ended, the number of effective writes, and the trace itself."""

    state: State
    terminal: str | None
    n_writes: int
    trace: Any = None
    disposition: str | None = None


class Condition(Strict):
    """Base of goal conditions. A subclass declares ``type: Literal["name"] = "name"`` and ``check``;
    :func:`register_condition` makes task files able to use it (``{"type": "name", ...}``)."""

    type: str

    def check(self, ctx: GoalContext) -> bool:
        raise NotImplementedError

    def references(self) -> list[tuple[str, str]]:
        """``(field, ref)`` pairs naming what the condition looks at: ``"collection/id"`` (an entity that
        must exist at reset) or ``"collection/"`` (a collection the benchmark must know). Checked at load."""
        return []


#: condition type name -> class (every registered goal-condition type)
GOAL_CONDITIONS: dict[str, type[Condition]] = {}
C = TypeVar("C", bound=type[Condition])


def register_condition(cls: C) -> C:
    """Class decorator: make a goal-condition type available to every task model, by its ``type``."""
    default = cls.model_fields["type"].default
    if not isinstance(default, str) or not default:
        raise TypeError(f'{cls.__name__}: declare `type: Literal["name"] = "name"`.')
    GOAL_CONDITIONS[default] = cls
    return cls


def _validate_condition(value: Any, handler: Any) -> Condition:
    if isinstance(value, Condition):
        return value
    if not isinstance(value, dict):
        raise ValueError("a goal condition is an object with a 'type'")
    kind = value.get("type")
    cls = GOAL_CONDITIONS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ValueError(
            f"unknown goal condition type {kind!r}.{did_you_mean(str(kind), GOAL_CONDITIONS)} "
            f"Known: {', '.join(sorted(GOAL_CONDITIONS))}."
        )
    return cls.model_validate(value)


#: a goal condition of any registered type (validated by its ``type``, serialized with all its fields)
GoalCondition = Annotated[SerializeAsAny[Condition], WrapValidator(_validate_condition)]


def _contains(container: Any, value: Any) -> bool:
    if isinstance(container, list):
        return value in container
    if isinstance(container, str) and isinstance(value, str):
        return value.lower() in container.lower()
    return False


def record_matches(
    record: Record,
    where: Mapping[str, Any],
    contains: Mapping[str, Any] | None = None,
    facts: Mapping[str, Sequence[Fact]] | None = None,
) -> bool:
    """Equality on ``where`` fields, membership/substring on ``contains`` fields, and every fact of
    ``facts[field]`` stated in that field (compared by meaning, :func:`~tooltrap.envs.core.values.mentions`)."""
    for key, value in where.items():
        if record.get(key) != value:
            return False
    if not all(_contains(record.get(key), value) for key, value in (contains or {}).items()):
        return False
    return all(mentions(record.get(key), fact) for key, wanted in (facts or {}).items() for fact in wanted)


@register_condition
class FieldCondition(Condition):
    """``entity``'s ``field`` compared with ``value``. ``contains``: list membership or substring.

    With a value ``kind`` (``date``, ``time``, ``amount``, ``name`` ...; see
    :mod:`~tooltrap.envs.core.values`) the comparison is by meaning: ``eq``/``ne``/``in`` compare the
    normalised values, ``contains``/``not_contains`` whether the field's text mentions the value (and
    ``unit`` is an amount's currency)."""

    type: Literal["field"] = "field"
    entity: str  # "collection/id"
    field: str
    op: Literal["eq", "ne", "contains", "not_contains", "in", "absent"] = "eq"
    value: Any = None
    kind: ValueKind | None = None
    unit: str | None = None

    @model_validator(mode="after")
    def _value_fits_op(self) -> FieldCondition:
        if self.op == "in" and not isinstance(self.value, list):
            raise ValueError("value: op 'in' needs a list of accepted values")
        if "/" not in self.entity:
            raise ValueError("entity: write it as 'collection/id'")
        if self.kind is not None and self.op != "absent":
            for value in self.value if self.op == "in" else [self.value]:
                Fact(kind=self.kind, value=value, unit=self.unit)  # raises when the value is no such kind
        return self

    def _same(self, actual: Any, value: Any) -> bool:
        return actual == value if self.kind is None else same(actual, value, self.kind)

    def _mentions(self, actual: Any) -> bool:
        if self.kind is None:
            return _contains(actual, self.value)
        return mentions(actual, Fact(kind=self.kind, value=self.value, unit=self.unit))

    def references(self) -> list[tuple[str, str]]:
        return (
            [("entity", self.entity)]
            if self.op != "absent"
            else [("entity", self.entity.partition("/")[0] + "/")]
        )

    def check(self, ctx: GoalContext) -> bool:
        collection, _, entity_id = self.entity.partition("/")
        record = ctx.state.get(collection, entity_id)
        if self.op == "absent":
            return record is None
        if record is None:
            return False
        actual = record.get(self.field)
        if self.op == "eq":
            return self._same(actual, self.value)
        if self.op == "ne":
            return not self._same(actual, self.value)
        if self.op == "contains":
            return self._mentions(actual)
        if self.op == "not_contains":
            return not self._mentions(actual)
        return any(self._same(actual, v) for v in self.value)  # "in"


@register_condition
class ExistsCondition(Condition):
    """Between ``min`` and ``max`` records of ``collection`` match ``where`` (equality), ``contains``
    (membership or substring) and ``mentions`` (each listed fact stated in that field, compared by
    meaning: a goal names the facts that must appear, not a phrase)."""

    type: Literal["exists"] = "exists"
    collection: str
    where: dict[str, Any] = Field(default_factory=dict)
    contains: dict[str, Any] = Field(default_factory=dict)
    mentions: dict[str, list[Fact]] = Field(default_factory=dict)
    min: int = 1
    max: int | None = None

    def references(self) -> list[tuple[str, str]]:
        return [("collection", self.collection + "/")]

    def check(self, ctx: GoalContext) -> bool:
        n = sum(
            1
            for r in ctx.state.records(self.collection)
            if record_matches(r, self.where, self.contains, self.mentions)
        )
        return n >= self.min and (self.max is None or n <= self.max)


@register_condition
class TerminalCondition(Condition):
    """The episode ended with this terminal tool (by name, e.g. ``respond``)."""

    type: Literal["terminal"] = "terminal"
    kind: str

    def check(self, ctx: GoalContext) -> bool:
        return ctx.terminal == self.kind


@register_condition
class NoWritesCondition(Condition):
    """No successful state-changing call (bookkeeping excepted)."""

    type: Literal["no_writes"] = "no_writes"

    def check(self, ctx: GoalContext) -> bool:
        return ctx.n_writes == 0


def check_condition(
    cond: Condition, state: State, *, terminal: str | None, n_writes: int, trace: Any = None
) -> bool:
    """Evaluate one goal condition (of any registered type)."""
    return cond.check(GoalContext(state, terminal, n_writes, trace, getattr(trace, "disposition", None)))


def goal_met(conditions: Sequence[Condition], ctx: GoalContext) -> bool:
    """Whether every goal condition holds."""
    return all(c.check(ctx) for c in conditions)


class Task(Strict):
    """A benchmark instance. Benchmarks subclass it to add their own fields."""

    id: str
    template_id: str
    benchmark: str
    domain: str
    instruction: str
    initial_state: InitialState
    tools: list[str] | None = None
    labels: dict[str, Any] = Field(default_factory=dict)
    goal: list[GoalCondition] = Field(default_factory=list)
    gold: list[ToolCall] = Field(default_factory=list)

    def gold_for(self, variant: Mapping[str, Any] | None = None) -> list[ToolCall]:
        """The careful solution when the task is played as ``variant`` (its values as a dict). Default:
        ``gold``, whatever the variant; a benchmark whose right answer depends on the variant (a safe
        or an unsafe world) overrides it."""
        return list(self.gold)

    def make_state(self) -> State:
        """A fresh state sharing this task's (never mutated) data."""
        s = self.initial_state
        return State(s.collections, now=s.now, context=s.context)

    def label_dict(self) -> dict[str, Any]:
        """Labels as a plain dict (subclasses may type them as a model)."""
        labels = self.labels
        return labels.model_dump() if isinstance(labels, BaseModel) else dict(labels)

    def entity_exists(self, ref: str) -> bool:
        collection, _, entity_id = ref.partition("/")
        return entity_id in self.initial_state.collections.get(collection, {})


TaskT = TypeVar("TaskT", bound=Task)


_SEMANTIC_ERROR = re.compile(r"^Value error, ([\w.]+): (.*)$", re.S)


def _field_path(loc: Sequence[Any]) -> str:
    return ".".join(str(p) for p in loc)


class TaskCheckError(ValueError):
    """Raised by a semantic task check (``Benchmark.check_task``): ``field`` is the offending path."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


#: a semantic check run on every task after it validates (references resolve, calls validate, ...)
TaskCheck = Callable[[Any], None]


def parse_tasks(
    raw: Any,
    model: type[TaskT],
    *,
    source: str,
    check: TaskCheck | None = None,
    limits: bool = False,
) -> list[TaskT]:
    """Validate a decoded task file (a list, or ``{"tasks": [...]}``) into ``model`` instances, then run
    ``check`` (a benchmark's semantic checks) on each; errors name the file, the task and the field.

    With ``limits`` (a user's file), each task is first held to the limits of user data
    (:func:`~tooltrap.envs.core.usage.check_json_value`: nesting, string sizes, finite numbers) and the
    file to :data:`~tooltrap.envs.core.usage.MAX_ROWS` tasks: what would only fail later (a prompt past
    the observation space, a recursion in a judge) fails here, naming the field."""
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise TaskValidationError(
            f"expected a list of tasks or an object with a 'tasks' list, got {describe(raw)}", file=source
        )
    if not raw:
        raise TaskValidationError("the file holds no tasks", file=source)
    if limits and len(raw) > MAX_ROWS:
        raise TaskValidationError(f"{len(raw):,} tasks; a file holds at most {MAX_ROWS:,}", file=source)
    tasks: list[TaskT] = []
    seen: dict[str, int] = {}
    for index, item in enumerate(raw):
        task_id = item.get("id") if isinstance(item, dict) else None
        label = str(task_id)[:200] if task_id is not None else f"#{index}"
        if not isinstance(item, dict | BaseModel):
            raise TaskValidationError(
                f"a task is a JSON object, got {describe(item)}", file=source, task_id=f"#{index}"
            )
        if isinstance(item, model):  # a validated task a caller passes: its checks and id still apply
            task_id = item.id
            label = str(task_id)[:200]
        elif limits:
            try:
                check_json_value(item, root="")
            except DataLimitError as exc:
                raise TaskValidationError(
                    exc.message, file=source, task_id=label, field=dotted(exc.path)
                ) from None
        try:
            task = item if isinstance(item, model) else model.model_validate(item)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            more = f" (and {exc.error_count() - 1} more errors)" if exc.error_count() > 1 else ""
            message, field = err["msg"], _field_path(err["loc"]) or None
            # cross-field validators report "Value error, <field path>: <message>"
            # (a nested model's validator: the path is relative to the model the error is located at)
            semantic = _SEMANTIC_ERROR.match(message)
            if semantic:
                inner, message = semantic.group(1), semantic.group(2)
                field = f"{field}.{inner}" if field else inner
            message = message.removeprefix("Value error, ")
            raise TaskValidationError(f"{message}{more}", file=source, task_id=label, field=field) from None
        if task.id in seen:
            first = tasks[seen[task.id]]
            same = "the same content" if first == task else "different content"
            raise TaskValidationError(
                f"duplicate task id: task #{seen[task.id]} has it too, with {same} (ids are unique: a "
                "task is picked, resumed and reported by its id)",
                file=source,
                task_id=task.id,
                field="id",
            )
        if check is not None:
            try:
                check(task)
            except TaskCheckError as exc:
                raise TaskValidationError(
                    exc.message, file=source, task_id=task.id, field=exc.field
                ) from None
        seen[task.id] = len(tasks)
        tasks.append(task)
    return tasks


def read_task_file(path: str | Path) -> list[Any]:
    """The decoded rows of a user's task file: a JSON list, an object with a ``tasks`` list, or JSONL (one
    task a line), each row held to the limits of user data (nesting, string sizes, finite numbers; see
    :mod:`~tooltrap.envs.core.usage`) and the file to :data:`~tooltrap.envs.core.usage.MAX_ROWS` rows.
    For a benchmark that adds to the rows before validating them (a shared world); errors are
    :class:`~tooltrap.envs.core.errors.TaskValidationError` naming the file, the row and the field."""
    path = Path(path)
    source = str(path)
    try:
        text = read_user_text(path)
    except UnreadableFileError as exc:
        where = f"line {exc.line}" if exc.line is not None else None
        raise TaskValidationError(exc.message, file=source, task_id=where) from None
    try:
        if path.suffix == ".jsonl":
            raw: Any = []
            for lineno, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        raw.append(loads_json(line))
                    except (ValueError, RecursionError) as exc:
                        raise TaskValidationError(
                            f"invalid JSON on line {lineno}: {json_problem(exc)}",
                            file=source,
                            task_id=f"line {lineno}",
                        ) from None
        else:
            raw = loads_json(text)
    except json.JSONDecodeError as exc:
        raise TaskValidationError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=source
        ) from None
    except (ValueError, RecursionError) as exc:  # NaN, integers past Python's digit limit, too deep
        raise TaskValidationError(f"invalid JSON: {json_problem(exc)}", file=source) from None
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise TaskValidationError(
            f"expected a list of tasks or an object with a 'tasks' list, got {describe(raw)}", file=source
        )
    if not raw:
        raise TaskValidationError("the file holds no tasks", file=source)
    if len(raw) > MAX_ROWS:
        raise TaskValidationError(f"{len(raw):,} tasks; a file holds at most {MAX_ROWS:,}", file=source)
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise TaskValidationError(
                f"a task is a JSON object, got {describe(item)}", file=source, task_id=f"#{index}"
            )
        try:
            check_json_value(item, root="")
        except DataLimitError as exc:
            task_id = item.get("id")
            label = str(task_id)[:200] if isinstance(task_id, str | int) else f"#{index}"
            raise TaskValidationError(
                exc.message, file=source, task_id=label, field=dotted(exc.path)
            ) from None
    return raw


def load_tasks(
    path: str | Path,
    model: type[TaskT] = Task,  # type: ignore[assignment]
    *,
    check: TaskCheck | None = None,
) -> list[TaskT]:
    """Load tasks from a user's JSON file (list or ``{"tasks": [...]}``) or JSONL file (one task a line),
    read by :func:`read_task_file`; ``check`` is the benchmark's semantic check (``Benchmark.check_task``)."""
    return parse_tasks(read_task_file(path), model, source=str(Path(path)), check=check)


def given_tasks(
    tasks: Iterable[Any], model: type[TaskT], *, check: TaskCheck | None = None, source: str = "tasks"
) -> list[TaskT]:
    """Tasks a Python caller passes to an env (``tasks=``): ``model`` objects or their JSON dicts,
    validated (dicts, held to the limits of user data), deduplicated and checked (``check``, the
    benchmark's semantic checks) as a task file's are; errors are :class:`TaskValidationError` naming
    ``source`` (the kwarg), the task and the field."""
    rows = [
        dict(item) if isinstance(item, Mapping) and not isinstance(item, dict) else item for item in tasks
    ]
    if not rows:
        raise TaskValidationError("no tasks given", file=source)
    return parse_tasks(rows, model, source=source, check=check, limits=True)


def load_package_tasks(
    package: str, resource: str, model: type[TaskT], *, check: TaskCheck | None = None
) -> list[TaskT]:
    """Load tasks shipped as package data."""
    ref = resources.files(package).joinpath(resource)
    source = f"{package}/{resource}"
    try:
        raw = json.loads(ref.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskValidationError("packaged task file is missing", file=source) from None
    return parse_tasks(raw, model, source=source, check=check)


class TaskCache:
    """A bounded memo of values derived from task *objects* (rendered prompts, indexes).

    Keyed by the task object and a key, never by the task id alone: two task files may reuse an id with
    other contents. Each entry holds its task, so the object's identity cannot be reused while the
    entry lives; past ``maxsize`` the oldest entries go first.
    """

    def __init__(self, maxsize: int = 4096):
        self.maxsize = maxsize
        self._data: dict[tuple[int, Hashable], tuple[Task, Any]] = {}

    def lookup(self, task: Task, key: Hashable) -> Any:
        """The value stored for this task object and key, or None."""
        hit = self._data.get((id(task), key))
        return hit[1] if hit is not None and hit[0] is task else None

    def store(self, task: Task, key: Hashable, value: Any) -> Any:
        """Remember ``value`` for this task object and key; returns it."""
        self._data[(id(task), key)] = (task, value)
        if len(self._data) > self.maxsize:
            del self._data[next(iter(self._data))]
        return value

    def __len__(self) -> int:
        return len(self._data)


class TaskSet(Sequence[TaskT]):
    """An ordered, id-indexed collection of tasks with label filters."""

    def __init__(self, tasks: Iterable[TaskT]):
        self._tasks = list(tasks)
        self._by_id = {t.id: t for t in self._tasks}
        if len(self._by_id) != len(self._tasks):
            # a second task under one id would never be picked by id, resumed or reported apart
            seen: set[str] = set()
            twice = next(t.id for t in self._tasks if t.id in seen or seen.add(t.id))  # type: ignore[func-returns-value]
            raise TaskValidationError(
                "duplicate task id: two tasks of one collection have it (ids are unique)",
                task_id=twice,
                field="id",
            )

    def __len__(self) -> int:
        return len(self._tasks)

    def __getitem__(self, index):  # type: ignore[override]
        return self._tasks[index]

    def get(self, task_id: str) -> TaskT:
        try:
            return self._by_id[task_id]
        except KeyError:
            raise UnknownTaskError("task id", task_id, self._by_id) from None

    @property
    def ids(self) -> list[str]:
        return [t.id for t in self._tasks]

    def select(
        self,
        *,
        ids: Iterable[str] | None = None,
        templates: Iterable[str] | None = None,
        **labels: Any,
    ) -> TaskSet[TaskT]:
        """Filter by ids, template ids and label values (a value may be a list of accepted values)."""
        chosen = self._tasks
        if ids is not None:
            chosen = [self.get(i) for i in ids]
        if templates is not None:
            wanted = set(templates)
            known = {t.template_id for t in self._tasks}
            for template in wanted - known:
                raise UnknownTaskError("template id", template, known)
            chosen = [t for t in chosen if t.template_id in wanted]
        for key, value in labels.items():
            if value is None:
                continue
            accepted = set(value) if isinstance(value, list | tuple | set) else {value}
            known_keys = {k for t in self._tasks for k in t.label_dict()}
            if key not in known_keys:
                raise UnknownTaskError("label", key, known_keys)
            chosen = [t for t in chosen if t.label_dict().get(key) in accepted]
        return TaskSet(chosen)


def select_task_ids(tasks: Iterable[Task], spec: str | None) -> list[str]:
    """Task ids matching ``spec``: comma-separated globs on task or template id, or ``label=value``
    (``tooltrap eval --tasks``, training datasets); in the tasks' order."""
    tasks = list(tasks)
    if not spec:
        return [t.id for t in tasks]
    chosen: list[str] = []
    labels: dict[str, set[str]] = {}
    for t in tasks:
        for key, value in t.label_dict().items():
            labels.setdefault(key, set()).add(str(value).lower())
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        if "=" in part:
            key, value = part.split("=", 1)
            if key not in labels:
                raise UnknownNameError("task label", key, labels)
            if value.lower() not in labels[key]:
                raise UnknownNameError(f"value of {key}", value, sorted(labels[key]))
            hits = [t.id for t in tasks if str(t.label_dict().get(key)).lower() == value.lower()]
        else:
            hits = [
                t.id for t in tasks if fnmatch.fnmatch(t.id, part) or fnmatch.fnmatch(t.template_id, part)
            ]
            if not hits:
                names = sorted({t.template_id for t in tasks} | {t.id for t in tasks})
                raise UnknownNameError("task or template", part, names)
        chosen.extend(h for h in hits if h not in chosen)
    if not chosen:
        raise EnvUsageError(f"--tasks {spec!r} matched no task.")
    order = {t.id: i for i, t in enumerate(tasks)}
    return sorted(chosen, key=order.__getitem__)
