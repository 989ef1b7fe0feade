"""scripts/check_readme_commands.py reads the README's commands as a newcomer runs them (CI runs the script
once, in a fresh clone): continuations joined, comments dropped, and what cannot run on a CI machine
skipped with its reason."""

from __future__ import annotations

from scripts.check_readme_commands import commands, skip_reason

README = """
Text.

```bash
tooltrap eval SABench-v0 --agent act-first --out runs/a   # a comment
python -m tooltrap.training.sft \\
    --config configs/sft_qwen2.5-0.5b.yaml
# a whole-line comment
tooltrap report runs/a --out "reports/#1"
```

```python
print("not a command")
```
"""


def test_commands_are_read_in_order_with_continuations_and_comments_handled():
    assert commands(README) == [
        "tooltrap eval SABench-v0 --agent act-first --out runs/a",
        "python -m tooltrap.training.sft --config configs/sft_qwen2.5-0.5b.yaml",
        'tooltrap report runs/a --out "reports/#1"',
    ]


def test_what_needs_a_gpu_a_server_or_a_cluster_is_skipped_with_its_reason():
    assert skip_reason("python -m tooltrap.training.sft --config configs/sft_qwen2.5-0.5b.yaml")
    assert "model server" in skip_reason("tooltrap eval X --agent openai:qwen --base-url http://h:8000/v1")
    assert "Ray" in skip_reason("tooltrap eval X --backend ray --ray-address HEAD:6379")
    assert skip_reason("tooltrap serve SABench-Calendar-v0 --port 8000")
    assert skip_reason("tooltrap eval SABench-v0 --agent act-first --out runs/a") is None
    assert skip_reason("inspect view bundle --log-dir logs --output-dir site") is None
