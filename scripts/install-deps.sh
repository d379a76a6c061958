#!/bin/sh
# Installs every Debian package strag's build and tests need. Run as root on
# Debian 12; a no-op (no apt-get call) when everything is already installed.
set -eu

PACKAGES="
  build-essential
  cmake
  ninja-build
  pkg-config
  zlib1g-dev
  libgtest-dev
  libgmock-dev
  libbenchmark-dev
  libsimdjson-dev
  python3
"

missing=""
for pkg in $PACKAGES; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $pkg"
  fi
done

if [ -z "$missing" ]; then
  exit 0
fi

echo "install-deps: installing:$missing"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $missing
