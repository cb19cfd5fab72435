#!/usr/bin/env bash
# The main job: installs and builds Strato, creates the example project from the template, validates and
# builds it, and (when the embedded platform is there) deploys it and calls its endpoints.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

npm ci --no-audit --no-fund
npm run build
STRATO="node $REPO/dist/cli.js"

WORK="${STRATO_EXAMPLE_DIR:-$(mktemp -d)}"
echo "== example project in $WORK/example"
cd "$WORK"
$STRATO init example --force
cd example
echo "== strato build"
$STRATO build
echo "== artifact"
tar tzf .strato/artifact.tar.gz | grep -v '^deps/strato/' | sed 's/^/  /'
echo "== manifest"
cat .strato/strato_manifest.json
