#!/usr/bin/env bash
# The main job: installs and builds Strato, creates the example project from the template, builds it, deploys
# it to the embedded platform (started on demand), calls every endpoint (HTTP and from a Python script), shows
# the environment, calls them again through a generated TypeScript client, then undeploys and stops the platform.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"

npm ci --no-audit --no-fund
npm run build
strato() { node "$REPO/dist/cli.js" "$@"; }

WORK="${STRATO_EXAMPLE_DIR:-$(mktemp -d)}"
export STRATO_DATA_DIR="${STRATO_DATA_DIR:-$WORK/strato-data}"   # the embedded platform's state, kept apart
unset STRATO_API_URL
cd "$WORK"
echo "== strato init example   (in $WORK)"
strato init example --force
cd example

echo; echo "== strato build"
strato build

echo; echo "== strato deploy   (the embedded platform starts on demand)"
strato deploy
export STRATO_API_KEY="$(cat "$STRATO_DATA_DIR/platform/api-key")"

echo; echo "== strato env get production --json"
strato env get production --json | tee endpoints.json
url() { node -e 'const j=require("./endpoints.json"); console.log(j.endpoints.find(e=>e.name===process.argv[1]).url)' "$1"; }

echo; echo "== calling every endpoint (Authorization: Bearer \$STRATO_API_KEY)"
call() { # METHOD URL [BODY]
  echo "-> $1 $2${3:+  $3}"
  curl -sS -X "$1" "$2" -H "Authorization: Bearer $STRATO_API_KEY" ${3:+-H 'Content-Type: application/json' -d "$3"}; echo
}
call POST "$(url gpu-hello)/runsync" '{"input": {"prompt": "hello", "repeat": 2}}'
call POST "$(url cpu-stats)/runsync" '{"input": {"numbers": [1, 2, 3, 4]}}'
call POST "$(url lb-api)/process" '{"text": "strato", "uppercase": true}'
call GET "$(url lb-api)/health"

echo; echo "== a plain Python script calling the deployed functions"
cat > call_it.py <<'PY'
from cpu_worker import cpu_stats
from lb_worker import process
print("cpu_stats ->", cpu_stats([3, 5, 7]))
print("process   ->", process("from a script"))
PY
PYTHONPATH="$REPO/engine/python" python3 call_it.py

echo; echo "== strato client: a typed TypeScript client of the environment, called from Node"
strato client --lang ts --out client
cat > call_it.ts <<'TS'
import { createClient } from './client/example-production';
const strato = createClient(); // the key: STRATO_API_KEY
strato.cpuStats({ numbers: [3, 5, 7] })
  .then((stats) => console.log('cpuStats ->', stats))
  .then(() => strato.lbApi.process({ text: 'from TypeScript' }))
  .then((r) => console.log('process  ->', r));
TS
"$REPO/node_modules/.bin/tsx" call_it.ts

echo; echo "== strato undeploy --yes; strato platform stop"
strato undeploy --yes
strato platform stop
