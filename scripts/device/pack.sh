#!/usr/bin/env bash
# Packs what a lent GPU machine needs for Strato's device checks into .device/payload.tar.xz (ignored by git; the device
# tool carries it): that machine has no package registry, no Node and no PostgreSQL. The payload holds this machine's
# Node, dist/ with the benches bundled (scripts/device/bundle-bench.mjs), and Debian's PostgreSQL with the libraries it
# links. scripts/device/run.sh unpacks it there and runs the GPU check and the platform benches.
set -euo pipefail
cd "$(dirname "$0")/../.."
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude

npm run build > /dev/null
node scripts/device/bundle-bench.mjs multinode platform-jobs

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/node/bin" "$stage/pglibs"
cp "$(command -v node)" "$stage/node/bin/node"
# dist without source maps: the check reads none, and the carried tree has a size limit.
tar -C . --exclude='*.map' -cf - dist | tar -C "$stage" -xf -

pg="$(ls -d /usr/lib/postgresql/*/ | sort -V | tail -1)"
pg="${pg%/}"
version="$(basename "$pg")"
mkdir -p "$stage/pg/lib/postgresql" "$stage/pg/share/postgresql"
tar -C /usr/lib/postgresql --exclude="$version/lib/bitcode" --exclude="$version/lib/llvmjit*" -cf - "$version" | tar -C "$stage/pg/lib/postgresql" -xf -
cp -r "/usr/share/postgresql/$version" "$stage/pg/share/postgresql/"
cp -r /usr/share/zoneinfo "$stage/pg/zoneinfo"
# Every shared library the server's programs and modules link, but the C runtime's own (the machine's are newer).
find "$pg" -type f \( -perm -u+x -o -name '*.so' \) ! -path '*/bitcode/*' ! -name 'llvmjit*' -print0 |
  { xargs -0 ldd 2>/dev/null || true; } | awk '/=> \//{print $3}' | sort -u |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/pglibs/"; done

mkdir -p .device
tar -C "$stage" -cJf .device/payload.tar.xz .
echo "packed .device/payload.tar.xz: $(du -h .device/payload.tar.xz | cut -f1) (Node $(node --version), PostgreSQL $version, $(ls "$stage/pglibs" | wc -l) libraries)"
