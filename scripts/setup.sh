#!/usr/bin/env bash
# Installs what tandem needs on Debian 12 (as root), only when something is
# missing: the build and test dependencies (Open MPI for tandem-mpi), and
# wordnet-base, the real text corpus the main job indexes (WordNet 3.0:
# 117,659 synsets with glosses, 6.5 MB download, no dependencies). apt's
# output goes to a log that is printed only when something fails.
set -euo pipefail
pkgs=(cmake make gcc pkg-config ocl-icd-opencl-dev opencl-c-headers pocl-opencl-icd
      libcmocka-dev libstemmer-dev libprotobuf-c-dev protobuf-c-compiler libxxhash-dev
      zlib1g-dev libstreamvbyte-dev libjansson-dev libmicrohttpd-dev oclgrind clang wordnet-base
      mesa-opencl-icd libclc-15 clang-15 llvm-spirv-15 spirv-tools
      python3-numpy python3-pytest python3-setuptools python3-venv
      libopenmpi-dev openmpi-bin)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  log=$(mktemp "${TMPDIR:-/tmp}/tandem-setup.XXXXXX.log")
  if ! { apt-get update -qq && apt-get install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
    cat "$log" >&2
    echo "setup: apt-get failed (log above, also in $log)" >&2
    exit 1
  fi
  rm -f "$log"
fi
echo "setup: all ${#pkgs[@]} packages present"
