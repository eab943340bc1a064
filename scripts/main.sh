#!/usr/bin/env bash
# The main job: build tandem, list the devices, and check a kernel on each.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset default -DTANDEM_BUILD_TESTS=OFF >/dev/null
cmake --build build -j "$(nproc 2>/dev/null || echo 2)" --target tandem_cli
./build/tandem devices
./build/tandem selfcheck
