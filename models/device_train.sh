#!/usr/bin/env bash
# One prepared training run for a lent GPU machine (the `device` tool: one H200, torch,
# onnx, onnxruntime and opencv installed, no network, no ../shared). It trains the
# stage-11 classifier (models/README.md, "Stage 11") from the training pack, so nothing of
# ../shared/data is needed there, and leaves the ONNX file and its manifest in OUT; the
# evaluate stage (peak rule, confidence map, figures) then runs back here, where the
# calibration and validation photos are.
#
# Here, once (the pack is git-ignored, at most ~50 MB):
#   .venv/bin/pip install torch==2.13.0
#   .venv/bin/python models/train.py --pack .cache/training-pack.zip
# There (run with carry [".cache/training-pack.zip"], timeout a few minutes over MINUTES):
#   bash models/device_train.sh .cache/training-pack.zip "$OUT" 9
# Back here (OUT's files copied to DIR):
#   .venv/bin/python models/train.py --only evaluate --out DIR
#   .venv/bin/python bench/vision_eval.py --suite --models DIR
# and ship only by the rule models/README.md writes down before the run.
set -euo pipefail
cd "$(dirname "$0")/.."
PACK=${1:-.cache/training-pack.zip}
OUT=${2:-${OUT:-.cache/device-out}}
MINUTES=${3:-9}  # the classifier's time box; the learning rate is annealed over it
mkdir -p "$OUT"
nvidia-smi -L || echo "no nvidia-smi: training on whatever torch finds"
python - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.cuda.is_available())
PY
# the first stage from scratch, as stage 11; with a GPU the epochs are seconds, so the
# time box, not the epoch count, ends it
python models/train.py --from-pack "$PACK" --device cuda --threads 8 \
  --only classifier --seed 20261201 --classifier-from scratch \
  --classifier-continue "400:4e-3:20261201:real=3:hard:min=${MINUTES}" \
  --out "$OUT" 2>&1 | tee "$OUT/train.log"
ls -la "$OUT"
