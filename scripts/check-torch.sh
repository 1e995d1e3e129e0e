#!/usr/bin/env bash
# check-torch.sh: the C model against its PyTorch twin (logits, loss, gradients, AdamW steps).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-/usr/bin/python3}
out=build/twin
rm -rf "$out"
mkdir -p "$out"
build/tests/tool_torch_check "$out"
"$PYTHON" scripts/twin.py check "$out"
