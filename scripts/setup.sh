#!/usr/bin/env bash
# Installs what Loom needs from Debian's packages (run as root), builds Loom,
# and runs it on examples: reads, runs, tunes, applies the tuned schedule and
# checks the result. Safe to run again: it installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# python3-venv: the test command installs NVRTC from PyPI into a virtual
# environment when the CUDA toolkit is absent (scripts/nvrtc.sh).
packages=(build-essential cmake clang libclang-rt-14-dev libomp-dev libisl-dev libsqlite3-dev libxgboost-dev libopenblas-dev libdnnl-dev libonnx-dev libonnx-testdata protobuf-c-compiler libprotobuf-c-dev python3-venv python3-numpy python3-onnx python3-pytest python3-setuptools)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "setup: missing packages: ${missing[*]}; run this script as root" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
fi

make
echo "== build/loom fmt examples/matmul_16.py"
build/loom fmt examples/matmul_16.py
echo "== build/loom run examples/matmul_16.py --verify"
build/loom run examples/matmul_16.py --verify
# Loom's main job: tune a kernel into the default database (loom.db), apply
# the best schedule found, and run the result against the interpreter.
echo "== build/loom tune examples/matmul_256.py --trials 64"
build/loom tune examples/matmul_256.py --trials 64
echo "== build/loom apply examples/matmul_256.py -o build/matmul_256.tuned.py"
build/loom apply examples/matmul_256.py -o build/matmul_256.tuned.py
echo "== build/loom run build/matmul_256.tuned.py --verify"
build/loom run build/matmul_256.tuned.py --verify
