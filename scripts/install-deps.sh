#!/usr/bin/env bash
# Install the Debian packages ricochet needs to build and test.
# Run as root (CI, `make demo`, `make check` call it); as another user it
# only reports what is missing.
set -euo pipefail
pkgs=(build-essential cmake pkg-config libyaml-dev libcjson-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "ricochet: missing Debian packages: ${missing[*]}" >&2
  echo "ricochet: install them with: sudo apt-get install ${missing[*]}" >&2
  exit 1
fi
echo "ricochet: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
