#!/usr/bin/env bash
# Installs a real VS Code (code-server 4.100.3 = VS Code 1.100.3, Node 20) from npm for the extension tests.
# Idempotent: cached under $STRATO_VSCODE_CACHE (default <tmpdir>/strato-vscode); prints the code-server path last.
# Offline except npm and Debian apt: ripgrep comes from Debian (the GitHub download is skipped through its cache
# file), native addons build from source against the local Node's headers, prebuilt-binary hosts point at a dead port.
set -euo pipefail
CS_VERSION=${CS_VERSION:-4.100.3}
ROOT=${STRATO_VSCODE_CACHE:-$(node -p "require('os').tmpdir()")/strato-vscode}
mkdir -p "$ROOT"; ROOT=$(cd "$ROOT" && pwd)
CS="$ROOT/cs/node_modules/.bin/code-server"
# One install at a time: the two real-VS Code test files call this at once on a fresh machine, and two apt-get runs
# collide on dpkg's lock. The second caller waits here, then finds the packages and the cache in place.
exec 9>"$ROOT/.install.lock"
flock 9

# Debian packages: the browser, ripgrep, and headers for code-server's native modules (only when missing; the
# check runs every time because the cache may outlive the packages).
need=""; for p in chromium ripgrep libkrb5-dev libx11-dev libxkbfile-dev libsecret-1-dev python3 make g++; do
  dpkg -s "$p" >/dev/null 2>&1 || need="$need $p"; done
if [ -n "$need" ]; then
  echo "installing Debian packages:$need" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends $need > "$ROOT/apt.log" 2>&1 \
    || { tail -20 "$ROOT/apt.log" >&2; exit 1; }
fi
if [ -x "$CS" ] && [ -f "$ROOT/cs/.installed-$CS_VERSION" ]; then echo "$CS"; exit 0; fi

export npm_config_userconfig=${npm_config_userconfig:-$HOME/.npmrc}
export HOME=$ROOT/home XDG_CONFIG_HOME=$ROOT/home/.config XDG_CACHE_HOME=$ROOT/home/.cache TMPDIR=$ROOT/tmp
mkdir -p "$HOME" "$TMPDIR" "$ROOT/meta" "$ROOT/cs"
export npm_config_unsafe_perm=true   # code-server's postinstall refuses root otherwise
export npm_config_yes=true           # node-pty's postinstall runs `npx node-gyp`
export npm_config_nodedir=${npm_config_nodedir:-$(node -p "require('path').resolve(process.execPath, '../..')")}  # local Node headers (<prefix>/include/node)
export npm_config_argon2_binary_host_mirror=http://127.0.0.1:9/ npm_config_kerberos_binary_host=http://127.0.0.1:9

# @vscode/ripgrep skips its GitHub download when "$TMPDIR/vscode-ripgrep-cache-<pkg>/<asset>" exists: pack Debian's rg there.
cd "$ROOT/meta"
[ -f "code-server-$CS_VERSION.tgz" ] || npm pack "code-server@$CS_VERSION" --silent >/dev/null
mkdir -p cs && tar xzf "code-server-$CS_VERSION.tgz" -C cs package/lib/vscode/npm-shrinkwrap.json
RGPKG=$(node -p "require('./cs/package/lib/vscode/npm-shrinkwrap.json').packages['node_modules/@vscode/ripgrep'].version")
[ -f "vscode-ripgrep-$RGPKG.tgz" ] || npm pack "@vscode/ripgrep@$RGPKG" --silent >/dev/null
mkdir -p rg && tar xzf "vscode-ripgrep-$RGPKG.tgz" -C rg package/lib/postinstall.js
RGASSET=$(sed -n "s/^const VERSION = '\(.*\)';/\1/p" rg/package/lib/postinstall.js)
mkdir -p "$TMPDIR/vscode-ripgrep-cache-$RGPKG" rgbin && cp "$(command -v rg)" rgbin/rg
tar czf "$TMPDIR/vscode-ripgrep-cache-$RGPKG/ripgrep-$RGASSET-x86_64-unknown-linux-musl.tar.gz" -C rgbin rg

cd "$ROOT/cs"; echo '{"name":"strato-code-server-host","private":true}' > package.json
npm install "code-server@$CS_VERSION" --foreground-scripts > "$ROOT/install.log" 2>&1 \
  || { tail -40 "$ROOT/install.log" >&2; exit 1; }
touch "$ROOT/cs/.installed-$CS_VERSION"
echo "$CS"
