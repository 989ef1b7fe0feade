"""Inspect AI eval logs of tooltrap runs (``tooltrap export RUN --format inspect``; the ``inspect`` extra).

A run folder (read through :mod:`.run`, its one owner) becomes one Inspect ``EvalLog``, which
``inspect_ai.log.read_eval_log`` reads and ``inspect view`` / ``inspect view bundle`` show. The mapping:

* **Log** (``EvalSpec``): ``task`` = the env id; ``model`` = the agent's name from run.json (every role's
  policy for a multi-agent run), the agent's settings in ``model_args``; ``task_args`` = the run's
  seed, env kwargs, defense, harness, protocol, task selection and variant grid; ``dataset`` = the task
  selection and the sample ids; ``metadata`` = the benchmark's name and the roles. ``results`` = the
  run's summary.json (each metric's value, its interval and n in the metric's metadata; an empty
  denominator is left out) and the mean of each reward score over the model-level episodes.
* **Sample**: one per episode (the latest record of each task and grid point), ``id`` = the task id,
  followed by the grid point as ``[key=value,...]`` when the run asked for one; ``epoch`` 1.
  ``input`` = the user's request (the record's instruction); ``messages`` = the conversation as the
  agent saw it from there on: each turn an assistant message (the model's raw text where the record
  kept it, the tool calls as the agent sent them), then one tool message per call with the result
  the agent read, or the error (an invalid call is a tool message with an ``error``; an action that
  did not parse is answered by a user message, as the env answered it), and a scripted user's
  follow-up as a user message. The system prompt is not in the record (it holds the serialized world,
  rebuilt from the task at reset), so it is not in the log either.
* **Events** per turn: a ``model`` event (its output is the assistant message), a ``tool`` event per
  call (arguments, result or error; the call's kind, its writes, and any hook's interception or rewrite
  in its metadata), a ``state`` event per write (a JSON Patch of the written entity at
  ``/collection/id``: ``add`` of the created entity, ``remove`` of a deleted one, ``replace`` /
  ``add`` / ``remove`` of each modified field, with the value before in ``replaced``); then a ``score``
  event per score.
* **Scores**: ``reward`` (the episode's reward; the reward components and the verdict in its
  metadata, the terminal call in ``answer``) and ``verdict`` (every boolean field of the verdict: goal
  met, collateral damage, unsafe commit, attack success ... whatever the benchmark's verdict holds). A
  multi-agent episode has ``reward_<role>`` for each role instead of ``reward``, each with that role's
  components.
* **Outcomes that are not the model's**: an episode with a ``system_outcome`` (the provider failed,
  timed out, filtered the content) gets the sample's ``error`` naming the outcome, an ``error``
  event, and no scores; so does a void multi-agent episode (the simulator failed).
* **Privileged information** (the episode variant, the grid point, the task's labels, the verdict)
  goes only into metadata, scores and the state events, which are the judge's and the trace's; the
  input and the messages hold only what the agent was shown and what it sent.

Deterministic: the same run folder exports byte-identical logs. The log's times are the modification
time of the run's episodes.jsonl (when its last episode was written), never the clock; every id is a
hash of the run and the sample; ``.eval`` archives get fixed entry times.
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from tooltrap.envs.core import EnvUsageError

from .run import (
    EPISODES,
    RUN,
    SUMMARY,
    Record,
    RunFolderError,
    read_episodes,
    read_run_info,
    read_summary,
    record_point,
)
from .transcript import Turn, as_dict, as_list, compact_json, transcript, write_patch

#: the log formats Inspect writes: a zip archive (``.eval``, the default) or one JSON file
LogFormat = Literal["eval", "json"]
LOG_FORMATS: tuple[str, ...] = ("eval", "json")

#: the scorer every score of an exported log names
SCORER = "tooltrap"


def _inspect() -> Any:
    """The ``inspect_ai`` modules this export uses, or a typed error naming the extra."""
    try:
        import inspect_ai.event as event
        import inspect_ai.log as log
        import inspect_ai.model as model
        import inspect_ai.scorer as scorer
        import inspect_ai.tool as tool
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("inspect_ai"):
            raise
        raise EnvUsageError("Inspect logs need inspect-ai: pip install 'tooltrap[inspect]'.") from None
    from types import SimpleNamespace

    return SimpleNamespace(event=event, log=log, model=model, scorer=scorer, tool=tool)


# -- small pure helpers --------------------------------------------------------------------------------
_dict, _list, _json = as_dict, as_list, compact_json


def _stable_id(*parts: Any) -> str:
    """A short id that depends only on ``parts`` (an export never draws a random id)."""
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return digest[:22]


def sample_id(record: Mapping[str, Any]) -> str:
    """The sample id of an episode record: its task id, and its grid point as ``[key=value,...]`` when
    the run asked for one (values as compact JSON, keys sorted)."""
    point = record_point(record)
    task = str(record.get("task_id"))
    if not point:
        return task
    shown = ",".join(
        f"{k}={json.dumps(v, ensure_ascii=False, separators=(',', ':'))}" for k, v in sorted(point.items())
    )
    return f"{task}[{shown}]"


#: tooltrap's error kinds as Inspect's tool-call error types (anything else: ``unknown``)
_TOOL_ERROR_TYPES = {"parse_error": "parsing", "invalid_arguments": "parsing", "too_many_calls": "limit"}


# -- one episode -----------------------------------------------------------------------------------------
class _Episode:
    """Builds one sample's messages and events from a record's trace (mirrors the messages the env
    sent the agent: ``ToolEnv._step_messages`` and the scripted user's follow-ups)."""

    def __init__(self, ia: Any, record: Record, sid: str, model: str, created: str) -> None:
        self.ia, self.record, self.sid, self.model, self.created = ia, record, sid, model, created
        self.events: list[Any] = []
        self.n_events = 0
        instruction = record.get("instruction")
        self.input = [
            ia.model.ChatMessageUser(
                content=instruction if isinstance(instruction, str) else "",
                id=self._id("m", 0),
                source="input",
            )
        ]
        self.messages: list[Any] = list(self.input)

    def _id(self, kind: str, *where: Any) -> str:
        return _stable_id(self.sid, kind, *where)

    def _event(self, cls: Any, **fields: Any) -> None:
        self.n_events += 1
        self.events.append(
            cls(uuid=self._id("e", self.n_events), timestamp=self.created, working_start=0.0, **fields)
        )

    def step(self, turn: Turn) -> None:
        """Add one turn of the transcript (:func:`~.transcript.step_turn`): its model event and
        messages, a tool event per call, a state event per write."""
        ia = self.ia
        number = turn.step
        tool_calls = [
            ia.tool.ToolCall(
                id=f"call_{reply.index}",
                function=reply.name,
                arguments=reply.arguments
                if isinstance(reply.arguments, dict)
                else {"arguments": reply.arguments},
            )
            for reply in turn.replies
        ]
        assistant = ia.model.ChatMessageAssistant(
            content=turn.content,
            tool_calls=tool_calls or None,
            model=self.model,
            id=self._id("m", number, "a"),
            source="generate",
        )
        self._event(
            ia.event.ModelEvent,
            model=self.model,
            input=list(self.messages),
            tools=[],
            tool_choice="auto",
            config=ia.model.GenerateConfig(),
            output=ia.model.ModelOutput(
                model=self.model,
                choices=[
                    ia.model.ChatCompletionChoice(
                        message=assistant, stop_reason="tool_calls" if tool_calls else "stop"
                    )
                ],
            ),
            metadata={"step": number, "format": turn.format, "action": turn.action},
        )
        self.messages.append(assistant)
        if turn.parse_error is not None:  # the action did not parse: the env answered with a user message
            self.messages.append(
                ia.model.ChatMessageUser(content=turn.parse_error, id=self._id("m", number, "u"))
            )
            return
        for reply, tool_call in zip(turn.replies, tool_calls, strict=True):
            call, error = reply.call, reply.error
            tool_error = (
                None
                if reply.ok
                else ia.tool.ToolCallError(
                    type=_TOOL_ERROR_TYPES.get(str(error.get("type")), "unknown"),
                    message=f"{error.get('type')}: {error.get('message')}",
                )
            )
            self.messages.append(
                ia.model.ChatMessageTool(
                    content=reply.content,
                    tool_call_id=tool_call.id,
                    function=tool_call.function,
                    error=tool_error,
                    id=self._id("m", number, reply.index),
                )
            )
            details = {
                k: call[k]
                for k in ("kind", "name", "arguments", "intercept", "rewrites", "hidden", "writes")
                if k in call
            }
            self._event(
                ia.event.ToolEvent,
                id=tool_call.id,
                function=tool_call.function,
                arguments=tool_call.arguments,
                result=_json(call.get("result")) if reply.ok else "",
                error=tool_error,
                metadata=details,
            )
            for write in reply.writes:
                self._event(
                    ia.event.StateEvent,
                    changes=write_patch(write),
                    metadata={
                        k: write.get(k) for k in ("tool", "domain", "action", "entity", "fields", "external")
                    },
                )
        if turn.follow_up is not None:
            self.messages.append(
                ia.model.ChatMessageUser(content=turn.follow_up, id=self._id("m", number, "follow-up"))
            )


def _scores(ia: Any, record: Record) -> dict[str, Any]:
    """The sample's scores: the reward (one per role for a multi-agent episode) and the verdict's
    booleans."""
    verdict = _dict(record.get("verdict"))
    trace = _dict(record.get("trace"))
    terminal = trace.get("terminal")
    answer = f"{terminal} {_json(trace.get('terminal_arguments'))}" if terminal else None
    scores: dict[str, Any] = {}
    rewards = record.get("rewards")
    if isinstance(rewards, dict) and rewards:
        components = _dict(record.get("reward_components"))
        for role, value in rewards.items():
            scores[f"reward_{role}"] = ia.scorer.Score(
                value=float(value),
                answer=answer,
                metadata={"role": role, "reward_components": components.get(role), "verdict": verdict},
            )
    else:
        scores["reward"] = ia.scorer.Score(
            value=float(record.get("reward", 0.0)),
            answer=answer,
            explanation=f"disposition: {trace.get('disposition')}; truncated: {trace.get('truncated')}",
            metadata={"reward_components": record.get("reward_components"), "verdict": verdict},
        )
    # a boolean the record also holds at its top level is a task label (``ambiguous``), not an outcome
    flags = {k: v for k, v in verdict.items() if isinstance(v, bool) and k not in record}
    if flags:
        scores["verdict"] = ia.scorer.Score(value=flags)
    return scores


def _outcome_error(record: Record) -> str | None:
    """Why an episode has no model-level result: a system outcome, or a void multi-agent episode."""
    outcome = record.get("system_outcome")
    if outcome:
        failed = record.get("failed_role")
        role = f" (role {failed})" if failed else ""
        return (
            f"system outcome {outcome}{role}: the provider ended the episode; counted apart, "
            "not a model failure"
        )
    if record.get("void"):
        return "void episode: the simulator failed (simulator_errors in metadata); counted apart"
    return None


#: record fields that become the sample's input, messages and scores rather than its metadata
_NOT_METADATA = ("instruction", "trace", "verdict", "reward_components")


def episode_sample(ia: Any, record: Record, *, model: str, created: str) -> Any:
    """The Inspect ``EvalSample`` of one episode record (``ia``: :func:`_inspect`)."""
    sid = sample_id(record)
    episode = _Episode(ia, record, sid, model, created)
    trace = _dict(record.get("trace"))
    for turn in transcript(record):
        episode.step(turn)
    error_text = _outcome_error(record)
    scores: dict[str, Any] | None = None
    error = None
    if error_text is not None:
        error = ia.log.EvalError(message=error_text, traceback="", traceback_ansi="")
        episode._event(ia.event.ErrorEvent, error=error)
    else:
        scores = _scores(ia, record)
        for name, score in scores.items():
            episode._event(ia.event.ScoreEvent, score=score, scorer=name)
    metadata = {k: v for k, v in record.items() if k not in _NOT_METADATA}
    metadata["trace"] = {k: v for k, v in trace.items() if k != "steps"}
    last = next((m for m in reversed(episode.messages) if m.role == "assistant"), None)
    return ia.log.EvalSample(
        id=sid,
        epoch=1,
        input=episode.input,
        target="",
        messages=episode.messages,
        output=ia.model.ModelOutput(
            model=model,
            choices=[ia.model.ChatCompletionChoice(message=last, stop_reason="stop")] if last else [],
        ),
        scores=scores,
        metadata=metadata,
        events=episode.events,
        uuid=_stable_id(sid, "sample", record.get("seed")),
        error=error,
        started_at=created,
        completed_at=created,
    )


# -- one run -----------------------------------------------------------------------------------------------
def _agent_name(info: Mapping[str, Any]) -> str:
    agent = _dict(info.get("agent"))
    name = agent.get("name")
    return name if isinstance(name, str) and name else "unknown"


def _results(ia: Any, samples: Sequence[Any], summary: Mapping[str, Any]) -> Any:
    """The log's results: each reward score's mean over the samples that have it, and summary.json's
    metrics (an empty denominator, NaN, left out)."""
    log = ia.log
    scored = [s for s in samples if s.scores]
    names = sorted({n for s in scored for n in s.scores if n != "verdict"})
    scores = []
    for name in names:
        values = [float(s.scores[name].value) for s in scored if name in s.scores]
        scores.append(
            log.EvalScore(
                name=name,
                scorer=SCORER,
                scored_samples=len(values),
                unscored_samples=len(samples) - len(values),
                metrics={"mean": log.EvalMetric(name="mean", value=sum(values) / len(values))},
            )
        )
    metrics = {}
    for name, interval in summary.items():
        interval = _dict(interval)
        value = interval.get("value")
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            extra = {k: interval[k] for k in ("ci_low", "ci_high", "n") if k in interval}
            metrics[name] = log.EvalMetric(name=name, value=value, metadata=extra)
    if metrics:
        scores.append(
            log.EvalScore(
                name="summary",
                scorer=SCORER,
                metrics=metrics,
                metadata={"source": SUMMARY, "system_outcomes": summary.get("system_outcomes")},
            )
        )
    completed = sum(1 for s in samples if s.error is None)
    return log.EvalResults(total_samples=len(samples), completed_samples=completed, scores=scores)


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "unknown"


def eval_log(
    records: Sequence[Record],
    run_info: Mapping[str, Any],
    summary: Mapping[str, Any] | None = None,
    *,
    created: str = "1980-01-01T00:00:00+00:00",
    name: str = "run",
) -> Any:
    """The Inspect ``EvalLog`` of a run: its episode records, its run.json (``run_info``) and its
    summary.json (``summary``), mapped as the module says. Pure: the same arguments give the same log.

    Args:
        records: The run's episode records (:func:`~.run.read_episodes`), one sample each.
        run_info: The run's run.json (:func:`~.run.read_run_info`).
        summary: The run's summary.json, the log's results (None: the reward means only).
        created: The log's time (ISO 8601, UTC), for every time field of the log.
        name: The run's name (the dataset's location).

    Raises:
        EnvUsageError: inspect-ai is not installed (the ``inspect`` extra).
        RunFolderError: A record cannot be made into a sample (a field of the wrong shape).
    """
    ia = _inspect()
    model = _agent_name(run_info)
    samples = []
    for record in records:
        try:
            samples.append(episode_sample(ia, record, model=model, created=created))
        except (ValueError, TypeError) as exc:  # pydantic's ValidationError is a ValueError
            first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise RunFolderError(
                f"{name}: the episode {sample_id(record)!r} cannot be exported ({type(exc).__name__}: {first})"
            ) from None
    env_id = run_info.get("env_id")
    task = env_id if isinstance(env_id, str) and env_id else "unknown"
    agent = _dict(run_info.get("agent"))
    task_args = {
        k: run_info[k]
        for k in ("seed", "env_kwargs", "mitigation", "harness", "protocol", "tasks", "variants")
        if k in run_info
    }
    run_id = _stable_id("run", dict(run_info), [s.id for s in samples])
    spec = ia.log.EvalSpec(
        eval_id=run_id,
        run_id=run_id,
        created=created,
        task=task,
        task_id=_stable_id("task", task),
        task_args=task_args,
        task_args_passed=task_args,
        solver=model,
        dataset=ia.log.EvalDataset(
            name=task, location=name, samples=len(samples), sample_ids=[s.id for s in samples]
        ),
        model=model,
        model_args={k: v for k, v in agent.items() if k != "name"},
        config=ia.log.EvalConfig(epochs=1),
        packages={"tooltrap": _version("tooltrap"), "inspect_ai": _version("inspect_ai")},
        metadata={
            "benchmark": run_info.get("benchmark"),
            "roles": run_info.get("roles"),
            "source": "tooltrap",
        },
    )
    return ia.log.EvalLog(
        version=2,
        status="success",
        eval=spec,
        plan=ia.log.EvalPlan(steps=[ia.log.EvalPlanStep(solver=model, params=dict(agent))]),
        results=_results(ia, samples, summary or {}),
        stats=ia.log.EvalStats(started_at=created, completed_at=created),
        samples=[ia.log.condense_sample(s) for s in samples],
    )


# -- files ------------------------------------------------------------------------------------------------
def run_time(run_dir: str | Path) -> str:
    """When a run's last episode was written (episodes.jsonl's modification time, UTC, whole seconds):
    the time of its log, the same at every export of the same folder."""
    stamp = int((Path(run_dir) / EPISODES).stat().st_mtime)
    return datetime.fromtimestamp(max(stamp, 315_532_800), UTC).isoformat()  # a zip holds nothing before 1980


def _fix_zip_times(path: Path, created: str) -> None:
    """Give every entry of the ``.eval`` archive at ``path`` the log's time (Inspect stamps each entry
    with the clock), entries and compression otherwise as written."""
    when = datetime.fromisoformat(created).timetuple()[:6]
    with zipfile.ZipFile(path) as src:
        entries = [(info, src.read(info)) for info in src.infolist()]
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with zipfile.ZipFile(tmp, "w") as dst:
            for info, data in entries:
                fixed = zipfile.ZipInfo(info.filename, date_time=when)
                fixed.compress_type, fixed.external_attr = info.compress_type, info.external_attr
                dst.writestr(fixed, data)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def export_inspect(run_dir: str | Path, out_path: str | Path, *, log_format: LogFormat | None = None) -> Path:
    """Write the Inspect log of the run folder ``run_dir`` to ``out_path`` (the format from its suffix,
    ``.eval`` or ``.json``, unless ``log_format`` names one); return the path.

    Raises:
        EnvUsageError: inspect-ai is not installed, or the format is not one Inspect writes.
        RunFolderError: ``run_dir`` is no run folder (no run.json, no readable episode), or a file of it
            is unreadable.
    """
    ia = _inspect()
    run_dir, out_path = Path(run_dir), Path(out_path)
    fmt = log_format or out_path.suffix.lstrip(".")
    if fmt not in LOG_FORMATS:
        raise EnvUsageError(
            f"{out_path}: an Inspect log is .eval or .json, not {out_path.suffix or 'no suffix'!r}"
        )
    if not run_dir.is_dir():
        raise RunFolderError(f"{run_dir} is not a folder: give a run folder written by tooltrap eval.")
    if not (run_dir / RUN).exists():
        raise RunFolderError(f"{run_dir} has no {RUN}: not a run folder written by tooltrap eval.")
    info = read_run_info(run_dir)
    records = read_episodes(run_dir / EPISODES)
    if not records:
        raise RunFolderError(f"{run_dir}: no readable episode in {EPISODES}; nothing to export.")
    summary: dict[str, Any] = {}
    if (run_dir / SUMMARY).exists():  # a run interrupted before its summary still exports
        try:
            summary = _dict(read_summary(run_dir))
        except (OSError, ValueError, RecursionError) as exc:
            raise RunFolderError(f"{run_dir / SUMMARY} is unreadable ({type(exc).__name__}: {exc})") from None
    created = run_time(run_dir)
    log = eval_log(records, info, summary, created=created, name=run_dir.name)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    ia.log.write_eval_log(log, out_path, format=fmt)
    if fmt == "eval":
        _fix_zip_times(out_path, created)
    return out_path
