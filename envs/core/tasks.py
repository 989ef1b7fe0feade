"""Tasks are data: pydantic models (extra="forbid") and loaders with errors that name file, task, field."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import TaskValidationError, UnknownTaskError
from .state import Record, State


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


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
class FieldCondition(Strict):
    """``entity``'s ``field`` compared with ``value``. ``contains``: list membership or substring."""

    type: Literal["field"] = "field"
    entity: str  # "collection/id"
    field: str
    op: Literal["eq", "ne", "contains", "not_contains", "in", "absent"] = "eq"
    value: Any = None


class ExistsCondition(Strict):
    """Between ``min`` and ``max`` records of ``collection`` match ``where`` (equality) and ``contains``."""

    type: Literal["exists"] = "exists"
    collection: str
    where: dict[str, Any] = Field(default_factory=dict)
    contains: dict[str, Any] = Field(default_factory=dict)
    min: int = 1
    max: int | None = None


class TerminalCondition(Strict):
    """The episode ended with this terminal tool (``respond`` or ``clarify``)."""

    type: Literal["terminal"] = "terminal"
    kind: str


class NoWritesCondition(Strict):
    """No successful state-changing call (bookkeeping excepted)."""

    type: Literal["no_writes"] = "no_writes"


GoalCondition = Annotated[
    FieldCondition | ExistsCondition | TerminalCondition | NoWritesCondition, Field(discriminator="type")
]


def _contains(container: Any, value: Any) -> bool:
    if isinstance(container, list):
        return value in container
    if isinstance(container, str) and isinstance(value, str):
        return value.lower() in container.lower()
    return False


def record_matches(
    record: Record, where: Mapping[str, Any], contains: Mapping[str, Any] | None = None
) -> bool:
    """Equality on ``where`` fields and membership/substring on ``contains`` fields."""
    for key, value in where.items():
        if record.get(key) != value:
            return False
    return all(_contains(record.get(key), value) for key, value in (contains or {}).items())


def check_condition(cond: Any, state: State, *, terminal: str | None, n_writes: int) -> bool:
    """Evaluate one goal condition."""
    if isinstance(cond, FieldCondition):
        collection, _, entity_id = cond.entity.partition("/")
        record = state.get(collection, entity_id)
        if cond.op == "absent":
            return record is None
        if record is None:
            return False
        actual = record.get(cond.field)
        if cond.op == "eq":
            return actual == cond.value
        if cond.op == "ne":
            return actual != cond.value
        if cond.op == "contains":
            return _contains(actual, cond.value)
        if cond.op == "not_contains":
            return not _contains(actual, cond.value)
        return actual in cond.value  # "in"
    if isinstance(cond, ExistsCondition):
        n = sum(1 for r in state.records(cond.collection) if record_matches(r, cond.where, cond.contains))
        return n >= cond.min and (cond.max is None or n <= cond.max)
    if isinstance(cond, TerminalCondition):
        return terminal == cond.kind
    if isinstance(cond, NoWritesCondition):
        return n_writes == 0
    raise TypeError(f"Unknown goal condition {cond!r}")


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


def parse_tasks(raw: Any, model: type[TaskT], *, source: str) -> list[TaskT]:
    """Validate a decoded task file (a list, or ``{"tasks": [...]}``) into ``model`` instances."""
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise TaskValidationError("expected a list of tasks or an object with a 'tasks' list", file=source)
    tasks: list[TaskT] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        task_id = item.get("id") if isinstance(item, dict) else None
        label = str(task_id) if task_id is not None else f"#{index}"
        try:
            task = model.model_validate(item)
        except ValidationError as exc:
            err = exc.errors(include_url=False)[0]
            more = f" (and {exc.error_count() - 1} more errors)" if exc.error_count() > 1 else ""
            message, field = err["msg"], _field_path(err["loc"]) or None
            # cross-field validators report "Value error, <field path>: <message>"
            semantic = _SEMANTIC_ERROR.match(message)
            if semantic and field is None:
                field, message = semantic.group(1), semantic.group(2)
            raise TaskValidationError(f"{message}{more}", file=source, task_id=label, field=field) from None
        if task.id in seen:
            raise TaskValidationError("duplicate task id", file=source, task_id=task.id, field="id")
        seen.add(task.id)
        tasks.append(task)
    return tasks


def load_tasks(path: str | Path, model: type[TaskT] = Task) -> list[TaskT]:  # type: ignore[assignment]
    """Load tasks from a JSON file (list or ``{"tasks": [...]}``) or a JSONL file (one task a line)."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TaskValidationError(f"cannot read task file: {exc.strerror}", file=source) from None
    try:
        if path.suffix == ".jsonl":
            raw = []
            for lineno, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        raw.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise TaskValidationError(
                            f"invalid JSON on line {lineno}: {exc.msg}", file=source
                        ) from None
        else:
            raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TaskValidationError(
            f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}", file=source
        ) from None
    return parse_tasks(raw, model, source=source)


def load_package_tasks(package: str, resource: str, model: type[TaskT]) -> list[TaskT]:
    """Load tasks shipped as package data."""
    ref = resources.files(package).joinpath(resource)
    source = f"{package}/{resource}"
    try:
        raw = json.loads(ref.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskValidationError("packaged task file is missing", file=source) from None
    return parse_tasks(raw, model, source=source)


class TaskSet(Sequence[TaskT]):
    """An ordered, id-indexed collection of tasks with label filters."""

    def __init__(self, tasks: Iterable[TaskT]):
        self._tasks = list(tasks)
        self._by_id = {t.id: t for t in self._tasks}

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
