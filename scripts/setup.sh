#!/usr/bin/env bash
# Installs what tandem needs on Debian 12 (as root), only when something is missing.
set -euo pipefail
pkgs=(cmake make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
      libcmocka-dev libstemmer-dev libprotobuf-c-dev protobuf-c-compiler libxxhash-dev
      zlib1g-dev libstreamvbyte-dev oclgrind clang)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}"
fi
echo "setup: all packages present"
