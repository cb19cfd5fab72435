#!/usr/bin/env bash
# The whole test suite on a fresh machine: installs what the tests need (Debian packages, npm packages),
# builds the bundles, then runs every test with node's built-in runner.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
/usr/bin/python3 -c 'import setuptools, wheel' 2>/dev/null || need_apt+=(python3-setuptools python3-wheel)
/usr/bin/python3 -m pip --version >/dev/null 2>&1 || need_apt+=(python3-pip)
/usr/bin/python3 -c 'import debugpy' 2>/dev/null || need_apt+=(python3-debugpy) # debugging: the extension's Debug and strato dev --debug
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need_apt+=(postgresql) # the platform on a real PostgreSQL server
[ -x /usr/bin/chromium ] || need_apt+=(chromium)          # the dev server's /docs page, rendered in a real browser
command -v script >/dev/null 2>&1 || need_apt+=(bsdutils) # a pseudo-terminal for the confirmation prompts
command -v ip >/dev/null 2>&1 || need_apt+=(iproute2)   # worker hosts: network namespaces with veth pairs (agents.test.ts)
command -v dockerd >/dev/null 2>&1 && command -v iptables-save >/dev/null 2>&1 || need_apt+=(docker.io iptables) # deploy --preview on a real engine
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "installing Debian packages: ${need_apt[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

npm ci --no-audit --no-fund
npm run build
npm run typecheck
npm run lint
# A real VS Code for the extension tests (code-server from npm, its Debian packages), once, before the tests start.
bash scripts/install-code-server.sh > /dev/null
npm test
