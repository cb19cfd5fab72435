#!/usr/bin/env bash
# Runs on a lent GPU machine (root, no package registry), in the repository: unpacks .device/payload.tar.xz made by
# scripts/device/pack.sh, then the GPU check and the platform benches, each bounded, their output also in $OUT.
#   device run: bash scripts/device/run.sh [gpu] [multinode] [platform-jobs]   (carry: .device; no step named: all three)
# MULTINODE_ARGS adds arguments to bench/multinode.ts (--throughput-only); STRATO_BENCH_* variables reach the benches.
set -uo pipefail
cd "$(dirname "$0")/../.."
out="${OUT:-$(mktemp -d)}"
p=/tmp/strato-device
mkdir -p "$p" && tar -xJf .device/payload.tar.xz -C "$p" || exit 1
rm -rf dist && mv "$p/dist" dist
export PATH="$p/node/bin:$PATH"
# PostgreSQL where Debian puts it (test/helpers/postgres.ts looks there); of its libraries, only those this machine
# lacks are added, so that nothing the machine has is replaced.
mkdir -p /usr/lib/postgresql /usr/share/postgresql
cp -r "$p"/pg/lib/postgresql/* /usr/lib/postgresql/ && cp -r "$p"/pg/share/postgresql/* /usr/share/postgresql/
[ -d /usr/share/zoneinfo ] || cp -r "$p/pg/zoneinfo" /usr/share/zoneinfo
for lib in "$p"/pglibs/*; do
  n="$(basename "$lib")"
  [ -e "/lib/x86_64-linux-gnu/$n" ] || [ -e "/usr/lib/x86_64-linux-gnu/$n" ] || cp "$lib" /usr/lib/x86_64-linux-gnu/
done
ldconfig
echo "== $(node --version), $(python3 --version), $(/usr/lib/postgresql/*/bin/postgres --version), $(nproc) cores"
ldd /usr/lib/postgresql/*/bin/postgres | grep 'not found' && echo "PostgreSQL lacks the libraries above"
nvidia-smi -L
nvidia-smi | grep -m1 'CUDA Version'

steps="${*:-gpu multinode platform-jobs}"
step() { [[ " $steps " == *" $1 "* ]]; }
if step gpu; then
  echo; echo "== GPU check"
  timeout "${GPU_CHECK_S:-200}" node scripts/device/gpu-check.mjs 2>&1 | tee "$out/gpu-check.log"
fi
if step multinode; then
  echo; echo "== bench/multinode.ts (dist/cli.js nodes)"
  # shellcheck disable=SC2086
  timeout "${MULTINODE_S:-200}" node dist/bench-multinode.cjs --bundle ${MULTINODE_ARGS:-} 2>&1 | tee "$out/multinode.log"
fi
if step platform-jobs; then
  echo; echo "== bench/platform-jobs.ts (dist/cli.js platform)"
  timeout "${PLATFORM_JOBS_S:-120}" node dist/bench-platform-jobs.cjs --bundle 2>&1 | tee "$out/platform-jobs.log"
fi
