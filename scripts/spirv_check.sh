#!/usr/bin/env bash
# Compiles kernels.cl (its includes expanded, as the library embeds it) with
# clang to SPIR-V under every option set the engine builds it with on a
# non-NVIDIA device, and validates each module with spirv-val for OpenCL 1.2:
# rusticl and the current AMD and Intel drivers take that route, so a
# construct only NVIDIA's or PoCL's front end accepts fails here.
#   scripts/spirv_check.sh KERNELS_SRC.cl
# Exits 77 (skipped) when clang, llvm-spirv or spirv-val is missing.
# Why `-target spir64 -emit-llvm` then llvm-spirv, not clang's `-target
# spirv64`: the same front end, but the translator can be told the SPIR-V
# version an OpenCL 1.2 driver takes (1.2; clang's own call writes 1.4, whose
# entry points spirv-val then finds incomplete). -O0: Debian's llvm-spirv 15
# cannot translate the `freeze` instructions LLVM 15's optimizer writes
# (drivers optimize the SPIR-V themselves).
set -euo pipefail
src=${1:?usage: spirv_check.sh KERNELS_SRC.cl}
pick() { for c in "$@"; do command -v "$c" >/dev/null && { echo "$c"; return; }; done; }
clang=$(pick clang-15 /usr/lib/llvm-15/bin/clang clang)
spirv=$(pick llvm-spirv-15 llvm-spirv)
val=$(pick spirv-val)
if [ -z "$clang" ] || [ -z "$spirv" ] || [ -z "$val" ]; then
  echo "spirv_check: skipped: needs clang-15, llvm-spirv-15 and spirv-val (spirv-tools)"
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/tandem-spirv.XXXXXX")
trap 'rm -rf "$work"' EXIT
# Work-group sizes: 128 (GPUs), 256 (CPUs), and TANDEM_WG_SIZE's range ends.
# Local memory: rusticl's llvmpipe (32 KiB), NVIDIA/Intel (48/64 KiB), PoCL
# (1 MiB). Codec variants that tests build (-DTDM_CODEC_PIPE, -DPFOR_NARROW).
sets=(
  "-DTDM_WG_SIZE=128 -DTDM_LOCAL_MEM=65536"
  "-DTDM_WG_SIZE=256 -DTDM_LOCAL_MEM=32768"
  "-DTDM_WG_SIZE=256 -DTDM_LOCAL_MEM=1048576"
  "-DTDM_WG_SIZE=64 -DTDM_LOCAL_MEM=49152"
  "-DTDM_WG_SIZE=1024 -DTDM_LOCAL_MEM=65536"
  "-DTDM_WG_SIZE=256 -DTDM_LOCAL_MEM=32768 -DTDM_CODEC_PIPE=1"
  "-DTDM_WG_SIZE=256 -DTDM_LOCAL_MEM=32768 -DPFOR_NARROW=1"
)
fails=0
for s in "${sets[@]}"; do
  # shellcheck disable=SC2086 # each set is a list of options
  if "$clang" -target spir64 -cl-std=CL1.2 -O0 -Werror -Xclang -finclude-default-header \
       $s -emit-llvm -c -x cl "$src" -o "$work/k.bc" 2>"$work/log" &&
     "$spirv" --spirv-max-version=1.2 "$work/k.bc" -o "$work/k.spv" 2>>"$work/log" &&
     "$val" --target-env opencl1.2 "$work/k.spv" 2>>"$work/log"; then
    echo "spirv_check: ok: $s"
  else
    echo "spirv_check: FAILED: $s"
    cat "$work/log"
    fails=$((fails + 1))
  fi
done
echo "spirv_check: ${#sets[@]} option sets, $fails failed"
[ "$fails" -eq 0 ]
