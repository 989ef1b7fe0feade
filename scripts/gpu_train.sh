#!/usr/bin/env bash
# SFT then GRPO of a small open-weight instruct model on SABench, with evaluations before and after.
#
#   bash scripts/gpu_train.sh [MODEL] [STEPS]          # single GPU (vLLM colocated with training)
#   GPUS=4 bash scripts/gpu_train.sh [MODEL] [STEPS]   # multi-GPU: GPU 0 serves vLLM, the rest train
#
# Needs: pip install -c constraints-gpu.txt -e '.[train,llm]' vllm   (a CUDA torch; see docs/training.md)
# Evaluation uses the test split (templates never seen in training) through a vLLM OpenAI server.
set -euo pipefail
MODEL=${1:-Qwen/Qwen2.5-0.5B-Instruct}
STEPS=${2:-200}
GPUS=${GPUS:-1}
OUT=${OUT:-runs/$(basename "$MODEL")}
PORT=${PORT:-8011}
mkdir -p "$OUT"

serve() {  # serve a checkpoint with vLLM's OpenAI server (hermes tool parser for Qwen2.5)
  python -m vllm.entrypoints.openai.api_server --model "$1" --served-model-name policy --port "$PORT" \
    --enable-auto-tool-choice --tool-call-parser hermes --max-model-len 32768 --gpu-memory-utilization 0.85 \
    > "$OUT/vllm-$2.log" 2>&1 &
  echo $! > "$OUT/vllm.pid"
  for _ in $(seq 300); do curl -sf "http://127.0.0.1:$PORT/v1/models" > /dev/null && return; sleep 2; done
  echo "vLLM did not start" >&2; exit 1
}
stop() { kill "$(cat "$OUT/vllm.pid")" 2> /dev/null || true; sleep 5; }
evaluate() {  # $1 checkpoint, $2 label
  serve "$1" "$2"
  tooltrap eval SABench-v0 --agent openai:policy --base-url "http://127.0.0.1:$PORT/v1" \
    --env-arg split=test --concurrency 32 --out "$OUT/eval-$2" --quiet
  stop
}

evaluate "$MODEL" before
python -m tooltrap.training.sft --config configs/sft_qwen2.5-0.5b.yaml --model_name_or_path "$MODEL" \
  --output_dir "$OUT/sft"
if [ "$GPUS" -gt 1 ]; then
  CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model "$OUT/sft" --port 8000 > "$OUT/trl-vllm.log" 2>&1 &
  VLLM=$!
  sleep 60
  CUDA_VISIBLE_DEVICES=$(seq -s, 1 $((GPUS - 1))) accelerate launch --config_file configs/accelerate_multi_gpu.yaml \
    --num_processes $((GPUS - 1)) -m tooltrap.training.grpo --config configs/grpo_qwen2.5-0.5b.yaml \
    --model_name_or_path "$OUT/sft" --output_dir "$OUT/grpo" --max_steps "$STEPS" --vllm_mode server
  kill $VLLM
else
  python -m tooltrap.training.grpo --config configs/grpo_qwen2.5-0.5b.yaml --model_name_or_path "$OUT/sft" \
    --output_dir "$OUT/grpo" --max_steps "$STEPS"
fi
evaluate "$OUT/sft" after-sft
evaluate "$OUT/grpo" after-grpo
tooltrap report "$OUT/eval-before" "$OUT/eval-after-sft" "$OUT/eval-after-grpo" --names before,after-sft,after-grpo --out "$OUT/report"
