#!/usr/bin/env bash
# Prints the path of an NVRTC library the tests compile CUDA C with:
# $LOOM_NVRTC when set, else the CUDA toolkit's (with its headers beside it),
# else the nvidia-cuda-nvrtc wheel from PyPI (and nvidia-cuda-runtime for the
# headers), installed into build/nvrtc-venv the first time. No GPU is needed.
# Prints nothing, and says why on stderr, when none can be had.
set -u
cd "$(dirname "$0")/.."
if [ -n "${LOOM_NVRTC:-}" ]; then
  echo "$LOOM_NVRTC"
  exit 0
fi
for lib in $(ldconfig -p 2>/dev/null | awk '/libnvrtc\.so/ {print $NF}') \
           /usr/local/cuda/lib64/libnvrtc.so; do
  if [ -f "$lib" ] && [ -f "$(dirname "$lib")/../include/cuda_fp16.h" ]; then
    echo "$lib"
    exit 0
  fi
done
dir="$PWD/build/nvrtc-venv"
wheel_lib() {
  ls "$dir"/lib/python3*/site-packages/nvidia/cu*/lib/libnvrtc.so.* \
     "$dir"/nvidia/cu*/lib/libnvrtc.so.* 2>/dev/null | grep -v builtins | head -1
}
lib=$(wheel_lib)
if [ -z "$lib" ]; then
  echo "nvrtc.sh: installing NVRTC from PyPI into $dir" >&2
  mkdir -p build
  # A virtual environment; where python3-venv is missing, a plain folder.
  if python3 -m venv "$dir" >/dev/null 2>&1; then
    "$dir/bin/pip" install -q nvidia-cuda-nvrtc nvidia-cuda-runtime >&2
  else
    rm -rf "$dir"
    python3 -m pip install -q --target "$dir" nvidia-cuda-nvrtc nvidia-cuda-runtime >&2
  fi
  lib=$(wheel_lib)
fi
if [ -z "$lib" ]; then
  echo "nvrtc.sh: no NVRTC: no CUDA toolkit, and PyPI's nvidia-cuda-nvrtc could not be installed" >&2
  exit 1
fi
echo "$lib"
