// Debugging one function the way the extension's Debug lens does, without VS Code: the launch request built by
// client/src/debugConfig.ts, sent to debugpy's own adapter (`python -m debugpy.adapter`), runs
// `python -m strato._debug`; breakpoints in the handler and in a project file it imports stop, variables are read,
// and the run continues to its result file. Also the runner alone: routes, failures with their traceback.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadProject, type ProjectModel } from '../../engine/src/project';
import { debugpyLaunch, launchConfigOf, outcomeOf, targetOf } from '../../client/src/debugConfig';
import { DapClient, debugpyPython } from '../helpers/dap';
import { PYTHONPATH, runPython } from './helpers';

const WORKER = `from strato import Endpoint


@Endpoint(name="calc", cpu="cpu3c-1-2")
def calc(numbers: list, scale: int = 2) -> dict:
    from pkg.util import total

    doubled = [n * scale for n in numbers]
    return {"total": total(doubled)}


api = Endpoint(name="lb", cpu="cpu3c-1-2")


@api.get("/items/{item_id}")
def item(item_id: int, q: str = "") -> dict:
    return {"id": item_id, "q": q}


@api.post("/boom")
def boom(x: int) -> dict:
    raise ValueError(f"bad {x}")
`;
const UTIL = `def total(values):
    result = sum(values)
    return result
`;
const LINE_DOUBLED = 9; // return {"total": ...} in calc_worker.py (1-based)
const LINE_RESULT = 3; // return result in pkg/util.py

let root: string;
let model: ProjectModel;

before(async () => {
  root = mkdtempSync(path.join(os.tmpdir(), 'strato-debug-'));
  mkdirSync(path.join(root, 'pkg'));
  writeFileSync(path.join(root, 'calc_worker.py'), WORKER);
  writeFileSync(path.join(root, 'pkg', '__init__.py'), '');
  writeFileSync(path.join(root, 'pkg', 'util.py'), UTIL);
  writeFileSync(path.join(root, 'requirements.txt'), '');
  model = await loadProject(root);
});
after(() => rmSync(root, { recursive: true, force: true }));

/** The launch request the extension sends for a function (or route) of the project, with its input file written. */
function launchOf(c: { endpoint: string; function?: string; route?: string }, input: unknown, python: string, tag: string) {
  const target = targetOf(model, c, (f) => `file://${root}/${f}`);
  assert.ok(typeof target !== 'string', String(target));
  const files = { input: path.join(root, `${tag}-input.json`), result: path.join(root, `${tag}-result.json`) };
  writeFileSync(files.input, JSON.stringify(input));
  const spec = model.endpoints.find((e) => e.name === c.endpoint)!;
  const launch = debugpyLaunch({ config: launchConfigOf(target), target, spec, root, python, packageRoot: PYTHONPATH, files, pathSeparator: path.delimiter });
  return { launch, files };
}

test('a Debug launch stops in the handler and in the project file it imports, reads variables, then runs to its result', { timeout: 60_000 }, async () => {
  const python = debugpyPython();
  const { launch, files } = launchOf({ endpoint: 'calc' }, { numbers: [1, 2, 3] }, python, 'calc');
  assert.equal(launch.module, 'strato._debug');
  const { client, process: adapter } = DapClient.spawnAdapter(python);
  try {
    await client.request('initialize', { clientID: 'strato-test', adapterID: 'strato', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true });
    const launched = client.send('launch', launch);
    await client.waitEvent('initialized', 20_000, undefined, true);
    const worker = path.join(root, 'calc_worker.py');
    const util = path.join(root, 'pkg', 'util.py');
    const bp1 = await client.request('setBreakpoints', { source: { path: worker }, breakpoints: [{ line: LINE_DOUBLED }] });
    await client.request('setBreakpoints', { source: { path: util }, breakpoints: [{ line: LINE_RESULT }] });
    assert.equal((bp1.breakpoints as Array<{ verified: boolean }>)[0].verified, true);
    await client.request('configurationDone');
    await launched;

    const first = await client.waitEvent('stopped', 30_000, undefined, true);
    const threadId = first.body!.threadId as number;
    const inHandler = await client.topFrameVariables(threadId);
    assert.equal(inHandler.frame.name, 'calc');
    assert.equal(inHandler.frame.source?.path, worker);
    assert.equal(inHandler.frame.line, LINE_DOUBLED);
    assert.equal(inHandler.vars.doubled, '[2, 4, 6]');
    assert.equal(inHandler.vars.scale, '2');
    const { stackFrames } = (await client.request('stackTrace', { threadId })) as { stackFrames: Array<{ source?: { path?: string } }> };
    assert.deepEqual(
      stackFrames.map((f) => path.basename(f.source?.path ?? '')),
      ['calc_worker.py'],
      "the runner's and the runtime's frames are not the user's code",
    );

    const next = client.waitEvent('stopped', 30_000);
    await client.request('continue', { threadId });
    const second = await next;
    const inImported = await client.topFrameVariables(second.body!.threadId as number);
    assert.equal(inImported.frame.source?.path, util);
    assert.equal(inImported.vars.result, '12');

    const ended = client.waitEvent('terminated', 30_000);
    await client.request('continue', { threadId: second.body!.threadId as number });
    await ended;
    const outcome = outcomeOf(readFileSync(files.result, 'utf8'));
    assert.equal(outcome.status, 'COMPLETED');
    assert.deepEqual(outcome.output, { total: 12 });
  } finally {
    client.dispose();
    adapter.kill();
  }
});

test('python -m strato._debug alone: a route with a path parameter and a query, a failing route, a failure with its traceback', async () => {
  const run = async (c: { endpoint: string; function?: string; route?: string }, input: unknown, tag: string) => {
    const { launch, files } = launchOf(c, input, 'python3', tag);
    const r = await runPython(['-m', String(launch.module), ...(launch.args as string[])], { cwd: root });
    return { code: r.code, stderr: r.stderr, outcome: outcomeOf(readFileSync(files.result, 'utf8')) };
  };
  const get = await run({ endpoint: 'lb', route: 'GET /items/{item_id}' }, { item_id: 7, q: 'hi' }, 'get');
  assert.equal(get.code, 0, get.stderr);
  assert.deepEqual(get.outcome.output, { id: 7, q: 'hi' });

  const boom = await run({ endpoint: 'lb', function: 'boom' }, { x: 3 }, 'boom');
  assert.equal(boom.code, 1);
  assert.equal(boom.outcome.status, 'FAILED');
  assert.equal(boom.outcome.error, 'HTTP 500 internal server error: ValueError: bad 3');

  const bad = await run({ endpoint: 'calc' }, { numbers: 'x' }, 'bad');
  assert.equal(bad.outcome.status, 'FAILED');
  assert.match(bad.outcome.error!, /^TypeError: unsupported operand/);
  // The traceback names the project's files and lines: the Strato output turns them into links.
  assert.match(bad.outcome.traceback!, /File ".*calc_worker\.py", line 9, in calc[\s\S]*File ".*pkg\/util\.py", line 2, in total/);
});
