"""How much the local agent's prefix cache saves (agents/hf.py): greedy first turns of a few tasks, one
at a time as ``--concurrency 1`` plays them, with and without the cache; the completions must be equal.

Usage: python scripts/bench_prefix_cache.py [--model smollm2] [--env SABench-Ticket-v0] [--tasks 2]
       [--max-new-tokens 16] [--threads 1] [--env-arg KEY=VALUE ...]

``--model``: ``smollm2`` (the named offline model, agents/pretrained.py; default when its package is
installed) or a checkpoint folder. Without the cache every prompt is computed whole; with it, the first
prompt fills the cache and each later one computes only what follows the prefix it shares (the system
prompt and the tool schemas). Prints seconds per prompt both ways and the prefix tokens reused.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument("--env", default="SABench-Ticket-v0")
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--max-new-tokens", type=int, default=16)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--env-arg",
        action="append",
        default=["toolset=target", "state_format=tools_only", "tool_schemas=transformers"],
    )
    args = parser.parse_args(argv)

    import gymnasium as gym
    import torch

    import tooltrap
    from tooltrap.agents.hf import TransformersModel
    from tooltrap.agents.pretrained import resolve_model
    from tooltrap.envs.core import parse_key_values

    torch.set_num_threads(args.threads)
    gym.register_envs(tooltrap)
    env = gym.make(args.env, **parse_key_values(args.env_arg))
    prompts = []
    for task in list(env.unwrapped.tasks)[: args.tasks]:
        _, info = env.reset(seed=0, options={"task_id": task.id})
        prompts.append((info["messages"], info["tools"]))
    started = time.monotonic()
    path = resolve_model(args.model)
    print(f"model {args.model} ready in {time.monotonic() - started:.1f} s ({path})")
    outputs = {}
    for reuse in (False, True):
        backend = TransformersModel(path, prefix_cache=reuse)
        started = time.monotonic()
        outputs[reuse] = [
            backend.generate([m], [t], max_new_tokens=args.max_new_tokens, temperature=0.0)[0]
            for m, t in prompts
        ]
        seconds = time.monotonic() - started
        n = [
            len(
                backend.tokenizer.apply_chat_template(
                    m, tools=t, add_generation_prompt=True, return_dict=False
                )
            )
            for m, t in prompts
        ]
        print(
            f"prefix cache {'on ' if reuse else 'off'}: {seconds:6.1f} s for {len(prompts)} prompts "
            f"({', '.join(map(str, n))} tokens), prefix tokens computed {backend.prefix_stats['computed']}, "
            f"reused {backend.prefix_stats['reused']}"
        )
    same = outputs[False] == outputs[True]
    print(f"identical greedy output: {same}")
    for text in outputs[True]:
        print("  ", repr(text))
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
