# Sourced by the GPU machine's checks (gpu-check.sh, gpu-tc-check.sh): the
# Debian packages Loom builds with, carried in build/gpu-carry/debs by
# `gpu-check.sh --prepare`, unpacked (dpkg -x, no root) and put on the
# compiler's, linker's, CMake's and the shell's paths where the machine
# lacks them.
gpu_has_header() { echo "#include <$1>" | cc -E - >/dev/null 2>&1; }

gpu_unpack() {
  local carry=$1 P=$PWD/$1/prefix/usr so base
  for deb in "$carry"/debs/*.deb; do dpkg -x "$deb" "$carry/prefix"; done
  export CPATH=$P/include${CPATH:+:$CPATH}
  export LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LIBRARY_PATH:+:$LIBRARY_PATH}
  export LD_LIBRARY_PATH=$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export CMAKE_PREFIX_PATH=$P
  export PATH=$P/bin:$PATH
  # The -dev packages' unversioned links point at the runtime packages' files.
  for so in "$P"/lib/x86_64-linux-gnu/lib*.so.[0-9]*; do
    base=${so%%.so.*}.so
    [ -e "$base" ] || ln -sf "$(basename "$so")" "$base"
  done
}

# Unpacks the carried packages (directory $1) when a dependency is missing;
# true when it did.
gpu_env() {
  if ! gpu_has_header isl/ctx.h || ! gpu_has_header sqlite3.h ||
     ! gpu_has_header xgboost/c_api.h || ! command -v protoc-c >/dev/null; then
    gpu_unpack "$1"
    return 0
  fi
  return 1
}
