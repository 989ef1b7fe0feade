"""The benchmark contract: what a benchmark declares (backends, task, variant, judge, reward) and the
checks of its task data. Adding a benchmark never changes the engine."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from .errors import EnvUsageError, ToolCallError, did_you_mean
from .reward import RewardConfig
from .state import Change, State
from .tasks import Task, TaskCheckError
from .tools import Backend, Toolset
from .trace import Trace, WriteRecord
from .variants import Variant

if TYPE_CHECKING:
    from .hooks import Hook

#: the disposition of an episode a commit ended (:class:`~tooltrap.envs.core.capabilities.CommitEndsEpisode`)
COMMIT_DISPOSITION = "commit"

#: reset options that pick the task (besides label filters); everything else is a variant key
TASK_SELECTORS: tuple[str, ...] = ("task_id", "task_index", "template_id", "templates")
#: every Benchmark subclass with a name, by name (filled as their modules are imported)
BENCHMARKS: dict[str, type[Benchmark[Any, Any, Any]]] = {}


class Verdict(Protocol):
    """What a judge returns: any object that turns into the dict of ``info["verdict"]``."""

    def to_dict(self) -> dict[str, Any]: ...


TaskT = TypeVar("TaskT", bound=Task)
VerdictT = TypeVar("VerdictT", bound=Verdict)
VariantT = TypeVar("VariantT", bound=Variant)


class Benchmark(Generic[TaskT, VerdictT, VariantT]):
    """A benchmark plugs into the engine by subclassing this, parameterised by its task, verdict and
    variant types (``class Library(Benchmark[LoanTask, LoanVerdict, Variant])``), and setting the
    class attributes. Adding a benchmark never changes the engine.

    A benchmark **must** provide: ``name``; ``backends`` (the tools); ``task_model`` (its task data);
    ``reward_config_cls`` (its :class:`~tooltrap.envs.core.reward.RewardConfig`); :meth:`judge` (the
    oracle: task and trace to a verdict with ``to_dict``).

    It **may** override: ``variant_model`` (how one task can be played) with :meth:`resolve_variant`,
    :meth:`initial_state` and :meth:`tool_names` (what a variant changes); :meth:`prompt_messages`;
    :meth:`episode_hooks` (its own per-episode hooks: an observation mask, an injection);
    :meth:`write_record` (how a change is described); :meth:`check_task` (its task data's checks);
    ``collection_domains`` and ``side_effect_collections``; the caps ``max_steps``,
    ``max_consecutive_errors`` and ``max_calls_per_step``; ``metrics`` and ``cluster_by`` for
    ``tooltrap eval`` / ``tooltrap report`` (or a report its evaluation package registers).

    And it may opt in to a capability of :mod:`tooltrap.envs.core.capabilities` by defining its member:
    scripted follow-up turns (``follow_up``), commits that end the episode (``commit_ends_episode``), a
    hint for shorter prompts (``shorter_prompt_hint``), a least-privilege check for gates
    (``overbroad``), id look-ups and trap notes for training demonstrations (``lookup_calls``,
    ``trap_note``). Generic code checks for them; a benchmark without them is not asked.
    """

    name: ClassVar[str] = ""
    backends: ClassVar[tuple[type[Backend], ...]] = ()
    task_model: ClassVar[type[Task]] = Task
    reward_config_cls: ClassVar[type[RewardConfig]] = RewardConfig
    #: the episode variant (``reset(options=...)`` keys besides the task selectors)
    variant_model: ClassVar[type[Variant]] = Variant
    #: collection -> domain (system) it belongs to
    collection_domains: ClassVar[dict[str, str]] = {}
    #: collections whose records a tool creates as a side effect of another write (delivered notices):
    #: the caller never names them, so a reader of the call alone does not see them
    side_effect_collections: ClassVar[frozenset[str]] = frozenset()
    #: metric -> (outcome, denominator or None): rates over the verdict's boolean fields, for the
    #: generic summary and report (a benchmark that registers its own report may leave this empty)
    metrics: ClassVar[dict[str, tuple[str, str | None]]] = {}
    #: the verdict field episodes are clustered by in bootstrap intervals
    cluster_by: ClassVar[str] = "template_id"
    max_steps: ClassVar[int] = 16
    max_consecutive_errors: ClassVar[int] = 5
    max_calls_per_step: ClassVar[int] = 8

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.name:
            return
        known = BENCHMARKS.get(cls.name)
        if known is not None and (known.__module__, known.__qualname__) != (cls.__module__, cls.__qualname__):
            raise EnvUsageError(
                f"Benchmark name {cls.name!r} is taken by {known.__module__}.{known.__qualname__}; "
                f"give {cls.__module__}.{cls.__qualname__} another name."
            )
        reserved = set(cls.variant_model.model_fields) & set(TASK_SELECTORS)
        if reserved:
            raise EnvUsageError(
                f"{cls.__qualname__}: variant keys {sorted(reserved)} are reserved for selecting tasks."
            )
        BENCHMARKS[cls.name] = cls

    def __init__(self) -> None:
        self._toolsets: dict[tuple[str, ...] | None, Toolset] = {}
        self._default_variant: VariantT = self.variant_model()  # type: ignore[assignment]
        # reset is on the hot path of RL: skip the variant hooks of benchmarks that do not override them
        self.plain_variants = (
            type(self).resolve_variant is Benchmark.resolve_variant
            and type(self).initial_state is Benchmark.initial_state
        )

    @property
    def full_toolset(self) -> Toolset:
        """Every tool of the benchmark's backends (the toolset of a task that names no tools)."""
        if None not in self._toolsets:
            self._toolsets[None] = Toolset(self.backends)
        return self._toolsets[None]

    def tool_names(self, task: TaskT, variant: VariantT | None = None) -> Sequence[str] | None:
        """The tools an episode of ``task`` played as ``variant`` exposes (None: every tool). Default:
        the task's ``tools``. Override when the variant adds or removes a tool (an audit tool that only
        one condition provides)."""
        return task.tools

    def toolset(self, task: TaskT, variant: VariantT | None = None) -> Toolset:
        """The episode's toolset (cached per list of names)."""
        names = self.tool_names(task, variant)
        if names is None:
            return self.full_toolset
        key = tuple(names)
        found = self._toolsets.get(key)
        if found is None:
            found = self._toolsets[key] = Toolset(self.backends, include=key)
        return found

    def episode_hooks(self, task: TaskT, variant: VariantT) -> Sequence[Hook]:
        """Hooks that are part of the benchmark's own semantics for this episode (an observation mask),
        run before any installed or wrapper hook. Default: none."""
        return ()

    # -- semantic checks of task data (run when tasks load; errors name the file, task and field) ----
    def known_collections(self, task: TaskT) -> set[str]:
        """The collections a task may refer to: the benchmark's, and those of its initial state."""
        return {*self.collection_domains, *self.side_effect_collections, *task.initial_state.collections}

    def check_task(self, task: TaskT) -> None:
        """Check that a validated task makes sense for this benchmark: its tools exist, its gold calls
        validate against the tool schemas, and its goal conditions refer to known collections and to
        entities that exist at reset. Raise :class:`~tooltrap.envs.core.tasks.TaskCheckError` naming the
        field. Benchmarks extend this (``super().check_task(task)`` first)."""
        names = {spec.name for backend in self.backends for spec in backend.tool_specs()}
        for i, name in enumerate(task.tools or []):
            if name not in names:
                raise TaskCheckError(f"tools.{i}", f"unknown tool {name!r}.{did_you_mean(name, names)}")
        self.check_calls(task, "gold", task.gold)
        for i, condition in enumerate(task.goal):
            for field, ref in condition.references():
                self.check_reference(task, f"goal.{i}.{field}", ref)

    def check_calls(self, task: TaskT, field: str, calls: Sequence[Any]) -> None:
        """Every call names a tool of the task's toolset and its arguments validate."""
        toolset = self.toolset(task)
        for i, call in enumerate(calls):
            if call.name not in toolset:
                raise TaskCheckError(
                    f"{field}.{i}.name",
                    f"{call.name!r} is not a tool of this task.{did_you_mean(call.name, toolset.specs)}",
                )
            try:
                toolset[call.name].validate(call.arguments)
            except ToolCallError as exc:
                raise TaskCheckError(f"{field}.{i}.arguments", exc.message) from None

    def check_reference(self, task: TaskT, field: str, ref: str) -> None:
        """``ref`` is ``"collection/id"`` (must exist at reset) or ``"collection/"`` (must be known)."""
        collection, _, entity_id = ref.partition("/")
        known = self.known_collections(task)
        if collection not in known:
            raise TaskCheckError(
                field, f"unknown collection {collection!r}.{did_you_mean(collection, known)}"
            )
        if entity_id and not task.entity_exists(ref):
            present = task.initial_state.collections.get(collection, {})
            raise TaskCheckError(
                field, f"{ref} is not in the initial state.{did_you_mean(entity_id, present)}"
            )

    def resolve_variant(self, task: TaskT, variant: VariantT) -> VariantT:
        """Fill task-dependent defaults and check the variant against the task (raise
        :class:`~tooltrap.envs.core.errors.VariantError` naming the key and the task)."""
        return variant

    def default_variant(self, task: TaskT) -> VariantT:
        """The variant an episode gets when nothing is asked for."""
        return self.resolve_variant(task, self._default_variant)

    def initial_state(self, task: TaskT, variant: VariantT) -> State:
        """The world at reset for ``task`` played as ``variant`` (the env and the oracle's replay both
        build it here). Override when the variant changes the world (a safe twin, a payload)."""
        return task.make_state()

    def prompt_messages(
        self, task: TaskT, state: State, toolset: Toolset, *, variant: VariantT | None = None, **options: Any
    ) -> list[dict[str, Any]]:
        """Chat messages that open the episode (system + user)."""
        return [{"role": "user", "content": task.instruction}]

    def write_record(self, tool: str, change: Change, state: State) -> WriteRecord:
        """Normalize one entity change. Override to derive domain/external differently."""
        record = state.get(change.collection, change.entity_id) or change.before or {}
        return WriteRecord(
            tool=tool,
            domain=self.collection_domains.get(change.collection, change.collection),
            action=change.op,
            entity=change.entity,
            fields=change.fields,
            external=bool(record.get("external", False)),
        )

    def judge(self, task: TaskT, trace: Trace) -> VerdictT:
        """The oracle: the verdict of a finished episode of ``task`` (deterministic and pure)."""
        raise NotImplementedError

    def verdict_dict(self, verdict: VerdictT) -> dict[str, Any]:
        """The verdict as ``info["verdict"]`` shows it."""
        # a user's judge written before verdicts were typed may return a mapping: take it as it is
        return verdict.to_dict() if hasattr(verdict, "to_dict") else dict(verdict)  # type: ignore[call-overload]
