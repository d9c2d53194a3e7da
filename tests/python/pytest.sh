#!/usr/bin/env bash
# The Python package's tests (python/tests) against the libloom.so built
# beside LOOM: the package is installed, as a user would install it, into a
# virtual environment in the build folder, from a copy of python/ (so the
# source tree gets no build files). Debian's numpy and pytest are used
# (scripts/setup.sh installs them); where they are missing, PyPI's. A
# sanitizer build of libloom.so is loaded with its runtime preloaded, so
# the calls from Python run under AddressSanitizer and UBSan too.
set -euo pipefail
loom=$(realpath "$1")
root=$(realpath "$2")
build=$(dirname "$loom")
venv="$build/pyenv"
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)

if [ ! -x "$venv/bin/python" ]; then
  "$python" -m venv --system-site-packages "$venv" || {
    echo "pytest.sh: cannot make a virtual environment (python3-venv missing)" >&2
    exit 77
  }
fi
if ! "$venv/bin/python" -c "import numpy, pytest" 2>/dev/null; then
  echo "pytest.sh: numpy or pytest missing from $python; installing them from PyPI" >&2
  "$venv/bin/pip" install -q numpy pytest >&2 || {
    echo "pytest.sh: no numpy and pytest (run scripts/setup.sh)" >&2
    exit 77
  }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$root/python" "$work/python"
echo "pytest.sh: installing the package for $build/libloom.so into $venv"
LOOM_BUILD_DIR="$build" "$venv/bin/pip" install -q --no-build-isolation --no-deps \
  --force-reinstall "$work/python"

export LOOM_TEST_ROOT="$root"
# (grep reads all of ldd's output: with -q it may stop early, and pipefail
# would take ldd's broken pipe for no match.)
if ldd "$build/libloom.so" | grep libasan >/dev/null; then
  # Python itself is not instrumented: its own allocations would be
  # reported as leaks, so only libloom's errors stop the run.
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS=detect_leaks=0
fi
cd "$work"
echo "pytest.sh: running python/tests${LD_PRELOAD:+ with the sanitizer runtime preloaded}"
"$venv/bin/python" -m pytest -q -p no:cacheprovider "$work/python/tests"
