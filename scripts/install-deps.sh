#!/bin/sh
# Installs the Debian packages strag needs, and the npm packages of web/
# (ECharts, inlined into the HTML report at build time). Run as root on
# Debian 12; a no-op (no apt-get or npm call) when everything is already
# installed.
#
# usage: scripts/install-deps.sh [--build | --all]
#   --build  what building `strag` needs (make build, make demo)
#   --all    also what the tests, benchmarks and fuzzing need: GoogleTest,
#            Google Benchmark, PyTorch, Chromium, clang, promtool, pybind11
#            (make python), ccache, OpenMPI (strag-mpi) (default)
set -eu
cd "$(dirname "$0")/.."

BUILD_PACKAGES="
  build-essential
  cmake
  ninja-build
  pkg-config
  zlib1g-dev
  libsimdjson-dev
  libisal-dev
  libyaml-cpp-dev
  libcpp-httplib-dev
  libsqlite3-dev
  libboost-math-dev
"
TEST_PACKAGES="
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  python3-torch
  python3
  chromium
  clang
  libclang-rt-14-dev
  prometheus
  pybind11-dev
  python3-dev
  python3-numpy
  ccache
  libopenmpi-dev
  openmpi-bin
"
case "${1:---all}" in
  --build) PACKAGES="$BUILD_PACKAGES" ;;
  --all) PACKAGES="$BUILD_PACKAGES $TEST_PACKAGES" ;;
  *) echo "usage: scripts/install-deps.sh [--build | --all]" >&2; exit 2 ;;
esac

missing=""
for pkg in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done

if [ -n "$missing" ]; then
  echo "install-deps: installing:$missing"
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    SUDO="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086
  $SUDO apt-get install -y --no-install-recommends $missing
fi

# web/: `npm ci` (exactly web/package-lock.json) when web/node_modules is
# missing or holds another ECharts than the lock file names.
locked=$(sed -n '/"node_modules\/echarts": {/{n;s/.*"version": "\([^"]*\)".*/\1/p;}' \
  web/package-lock.json)
installed=""
if [ -f web/node_modules/echarts/package.json ]; then
  installed=$(sed -n 's/^  "version": "\([^"]*\)".*/\1/p' \
    web/node_modules/echarts/package.json | head -n 1)
fi
if [ ! -d web/node_modules ] || [ "$installed" != "$locked" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    echo "install-deps: npm is needed to install web/ (ECharts); install" \
      "Node.js and npm" >&2
    exit 1
  fi
  echo "install-deps: npm ci in web/ (ECharts $locked)"
  (cd web && npm ci --no-audit --no-fund)
fi
