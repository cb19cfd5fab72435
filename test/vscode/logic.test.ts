// The extension's pure logic, with plain node (no VS Code): the Endpoints/Environments trees built from a real
// project model (the `strato init` template), the run input prefilled from parameters, the environment pick, jobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { templateFiles } from '../../engine/src/init/template';
import { analyzeFiles } from '../helpers/analysis';
import {
  buildEndpointTree,
  buildEnvironmentTree,
  buildPreviewNode,
  codeNameOf,
  deployedStateOf,
  environmentOfNode,
  type EnvironmentInfo,
  type TreeNode,
} from '../../client/src/endpointTree';
import { functionOf, parseInput, prefillInput } from '../../client/src/inputs';
import { checkEnvironmentName, environmentItems, NEW_ENVIRONMENT, onlyChoice } from '../../client/src/environmentPick';
import { JobList, jobNodes, jobReport } from '../../client/src/jobs';
import { endpointTargetOf, environmentItemOf, environmentOf, flagOf, folderHintOf, jobIdOf, optionOf } from '../../client/src/commandArgs';
import { lastTraceback, linkTraceback, projectLocator } from '../../client/src/traceback';
import { folderLooksLikeStrato, importsStrato } from '../../client/src/stratoSignals';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Whether package.json's menus offer a command on an item of that context value (its `viewItem =~ /.../` patterns). */
function offered(command: string, contextValue: string | undefined): boolean {
  const menus = (require('../../package.json') as { contributes: { menus: Record<string, Array<{ command: string; when: string }>> } }).contributes.menus;
  return menus['view/item/context'].some(
    (m) =>
      m.command === command &&
      [...m.when.matchAll(/viewItem =~ \/(.+?)\/(?: |$)/g)].some((x) => new RegExp(x[1].replace(/\\\//g, '/')).test(contextValue ?? '')),
  );
}

async function templateModel() {
  const t = templateFiles('shop');
  return analyzeFiles({ 'gpu_worker.py': t['gpu_worker.py'], 'cpu_worker.py': t['cpu_worker.py'], 'lb_worker.py': t['lb_worker.py'] });
}

const production: EnvironmentInfo = {
  app: 'shop',
  environment: 'production',
  endpoints: [
    { name: 'lb-api', type: 'load-balanced', url: 'http://p/lb/e3', routes: [{ method: 'POST', path: '/process' }] },
    { name: 'cpu-stats', type: 'QUEUE', url: 'http://p/v2/e1' },
  ],
};

test('the Endpoints tree lists the template endpoints by name with kind, file:line, functions and routes', async () => {
  const model = await templateModel();
  const nodes = buildEndpointTree([{ name: 'shop', model }]);
  assert.deepEqual(
    nodes.map((n) => `${n.label} | ${n.description}`),
    ['cpu-stats | queue · cpu_worker.py:8', 'gpu-hello | queue · gpu_worker.py:9', 'lb-api | load-balanced · lb_worker.py:7'],
  );
  assert.deepEqual(
    nodes[0].children!.map((c) => `${c.label}${c.description}`),
    ['cpu_stats(numbers)'],
  );
  assert.deepEqual(
    nodes[2].children!.map((c) => `${c.label} -> ${c.description}`),
    ['POST /process -> process', 'GET /health -> health'],
  );
  assert.deepEqual(nodes[0].location, { root: '/project', file: 'cpu_worker.py', line: 7 });
  assert.match(nodes[1].tooltip!, /GPU ADA_24|GPU /);
  assert.match(nodes[0].tooltip!, /not deployed/);
});

test('two endpoints of one name both show, each marked, with ids VS Code accepts (a repeated id empties the whole view)', async () => {
  const model = await analyzeFiles({
    'a.py':
      'from strato import Endpoint\n\n\n@Endpoint(name="dup", cpu="cpu3c-1-2")\ndef f(x: int) -> int:\n    return x\n\n\n@Endpoint(name="dup", cpu="cpu3c-1-2")\ndef g(x: int) -> int:\n    return x\n',
    'b.py': 'from strato import Endpoint\n\n\n@Endpoint(name="ok-one", cpu="cpu3c-1-2")\ndef h(x: int) -> int:\n    return x\n',
  });
  const ids: string[] = [];
  const walk = (ns: TreeNode[]) => ns.forEach((n) => (ids.push(n.id), walk(n.children ?? [])));
  const nodes = buildEndpointTree([{ name: 'p', model }]);
  walk(nodes);
  assert.equal(new Set(ids).size, ids.length, ids.join('\n'));
  assert.deepEqual(
    nodes.map((n) => `${n.label} | ${n.description} | ${n.icon}`),
    ['dup | queue · a.py:4 · duplicate name | error', 'dup | queue · a.py:9 · duplicate name | error', 'ok-one | queue · b.py:4 | list-ordered'],
  );
  assert.match(nodes[0].tooltip!, /another endpoint of the project is also named dup: rename one/);
  // The Environments view: one app listed twice (two folders deployed as one app) still gives unique ids.
  const envIds: string[] = [];
  const walkEnv = (ns: TreeNode[]) => ns.forEach((n) => (envIds.push(n.id), walkEnv(n.children ?? [])));
  walkEnv(buildEnvironmentTree([production, production]));
  assert.equal(new Set(envIds).size, envIds.length);
  assert.deepEqual(environmentOfNode({ id: envIds.find((id) => id.endsWith('#2'))! }), { app: 'shop', environment: 'production' });
});

test('deployed endpoints show one child per environment with its URL; undeployed ones none', async () => {
  const model = await templateModel();
  const staging: EnvironmentInfo = { app: 'shop', environment: 'staging', endpoints: [{ name: 'cpu-stats', type: 'QUEUE', url: 'http://p/v2/s1' }] };
  const nodes = buildEndpointTree([{ name: 'shop', model }], new Map([[model.root, deployedStateOf([staging, production])]]));
  const cpu = nodes.find((n) => n.label === 'cpu-stats')!;
  assert.deepEqual(
    cpu.children!.filter((c) => c.url).map((c) => `${c.label} ${c.url}`),
    ['production http://p/v2/e1', 'staging http://p/v2/s1'],
  );
  assert.equal(cpu.icon, 'cloud');
  assert.match(cpu.tooltip!, /deployed: production, staging/);
  assert.equal(nodes.find((n) => n.label === 'gpu-hello')!.children!.filter((c) => c.url).length, 0);
});

test('with several folders the Endpoints tree has one level per folder; node ids are unique', async () => {
  const model = await templateModel();
  const other = { ...model, root: '/other' };
  const nodes = buildEndpointTree([
    { name: 'shop', model },
    { name: 'other', model: other },
  ]);
  assert.deepEqual(
    nodes.map((n) => `${n.label}: ${n.children!.length}`),
    ['shop: 3', 'other: 3'],
  );
  const ids: string[] = [];
  const walk = (ns: typeof nodes) => ns.forEach((n) => (ids.push(n.id), walk(n.children ?? [])));
  walk(nodes);
  assert.equal(new Set(ids).size, ids.length);
});

test('the Environments tree lists environments with endpoints (sorted) and LB routes with full URLs', () => {
  const nodes = buildEnvironmentTree([production]);
  assert.deepEqual(
    nodes.map((n) => `${n.label} ${n.description}`),
    ['production 2 endpoint(s)'],
  );
  assert.deepEqual(
    nodes[0].children!.map((c) => `${c.label} ${c.url}`),
    ['cpu-stats http://p/v2/e1', 'lb-api http://p/lb/e3'],
  );
  assert.deepEqual(
    nodes[0].children![1].children!.map((c) => `${c.label} ${c.url}`),
    ['POST /process http://p/lb/e3/process'],
  );
  // "Generate TypeScript Client" on an environment's node reads its app and environment from the node.
  assert.equal(nodes[0].contextValue, 'strato.environment');
  assert.deepEqual(environmentOfNode(nodes[0]), { app: 'shop', environment: 'production' });
  assert.equal(environmentOfNode(nodes[0].children![0]), undefined, 'an endpoint is not an environment');
});

test('Copy URL is offered on every item that shows a URL, in every view, and on no other', async () => {
  const model = await templateModel();
  const endpoints = buildEndpointTree([{ name: 'shop', model }], new Map([[model.root, deployedStateOf([production])]]));
  const preview = buildPreviewNode('shop', {
    pid: 1,
    network: 'strato-preview',
    url: 'http://p',
    startedAt: 0,
    endpoints: [{ name: 'lb-api', type: 'LOAD_BALANCED', url: 'http://c/lb', routes: [{ method: 'POST', path: '/process' }] }],
  });
  const all: TreeNode[] = [];
  const walk = (ns: readonly TreeNode[]) => ns.forEach((n) => (all.push(n), walk(n.children ?? [])));
  walk([...endpoints, ...buildEnvironmentTree([production]), preview]);
  const withUrl = all.filter((n) => n.url);
  assert.deepEqual(
    withUrl.map((n) => n.id).filter((id) => id.endsWith(':POST:/process')),
    ['env:shop:production:lb-api:POST:/process', 'preview:shop:lb-api:POST:/process'],
    'routes of the Environments view and of a preview are among them',
  );
  assert.deepEqual(
    withUrl.filter((n) => !offered('strato.copyUrl', n.contextValue)).map((n) => n.id),
    [],
  );
  assert.deepEqual(
    all.filter((n) => !n.url && offered('strato.copyUrl', n.contextValue)).map((n) => n.id),
    [],
  );
  assert.ok(offered('strato.showLogs', 'strato.deployment') && !offered('strato.showLogs', 'strato.url'), 'only deployments have logs');
});

test('the run input is prefilled from parameters: defaults, placeholders by annotation, route functions for LB', async () => {
  const model = await templateModel();
  const ep = (n: string) => model.endpoints.find((e) => e.name === n)!;
  assert.equal(prefillInput(functionOf(ep('gpu-hello'), 'gpu_hello')), '{"prompt":"hello","repeat":1}');
  assert.equal(prefillInput(functionOf(ep('cpu-stats'), 'cpu_stats')), '{"numbers":[1.5,2.5]}');
  assert.equal(prefillInput(functionOf(ep('lb-api'), 'process', 'POST', '/process')), '{"text":"Hello","uppercase":false}');
  assert.equal(prefillInput(functionOf(ep('lb-api'), 'health', 'GET', '/health')), '{}');
  assert.equal(prefillInput(undefined), '{}');
});

test('typed input must be a JSON object; an empty box is {}', () => {
  assert.deepEqual(parseInput(' '), { ok: true, value: {} });
  assert.deepEqual(parseInput('{"numbers": [1, 2]}'), { ok: true, value: { numbers: [1, 2] } });
  assert.equal(parseInput('[1]').ok, false);
  const bad = parseInput('{numbers: 1}');
  assert.ok(!bad.ok && /not valid JSON/.test(bad.message));
});

test('the deploy environment pick: existing ones (not the dev server\'s live), production offered when new, then "new..."', () => {
  const none = environmentItems([], { allowNew: true, forDeploy: true });
  assert.deepEqual(
    none.map((i) => `${i.label}|${i.description ?? ''}|${i.picked ?? false}`),
    ['production|new|true', `${NEW_ENVIRONMENT}||false`],
  );
  const some = environmentItems(
    [
      { name: 'staging', endpoints: 3 },
      { name: 'live', endpoints: 1 },
      { name: 'production', endpoints: 3 },
    ],
    { allowNew: true, forDeploy: true },
  );
  assert.deepEqual(
    some.map((i) => i.label),
    ['production', 'staging', NEW_ENVIRONMENT],
  );
  assert.equal(some[1].description, '3 endpoint(s)');
  const read = environmentItems([{ name: 'staging' }], { allowNew: false, forDeploy: false });
  assert.equal(onlyChoice(read), 'staging');
  assert.equal(onlyChoice(none), undefined);
  // Reading: the dev server's live environment while it runs, not the empty one a stopped dev server leaves.
  const running = environmentItems(
    [
      { name: 'live', endpoints: 2 },
      { name: 'production', endpoints: 4 },
    ],
    { allowNew: false, forDeploy: false },
  );
  assert.deepEqual(
    running.map((i) => i.label),
    ['live', 'production'],
  );
  const stopped = environmentItems(
    [
      { name: 'live', endpoints: 0 },
      { name: 'production', endpoints: 4 },
    ],
    { allowNew: false, forDeploy: false },
  );
  assert.equal(onlyChoice(stopped), 'production');
});

test('a new environment name is checked before anything is built', () => {
  assert.equal(checkEnvironmentName('staging', []), undefined);
  assert.match(checkEnvironmentName('', [])!, /type a name/);
  assert.match(checkEnvironmentName('bad name', [])!, /letters, digits/);
  assert.match(checkEnvironmentName('live', [])!, /dev server/);
  assert.match(checkEnvironmentName('staging', [{ name: 'staging' }])!, /exists already/);
});

test('the Jobs list keeps submitted jobs newest first, tracks pending ones, and gives each state its icon and actions', () => {
  const jobs = new JobList(2);
  const base = { endpoint: 'cpu-stats', endpointId: 'e1', environment: 'production', kind: 'QUEUE' as const, input: { numbers: [1] } };
  jobs.upsert({ ...base, id: 'j1', status: 'IN_QUEUE', submittedAt: 1 });
  jobs.upsert({ ...base, id: 'j2', status: 'COMPLETED', output: { mean: 1 }, submittedAt: 2 });
  assert.deepEqual(
    jobs.pending().map((j) => j.id),
    ['j1'],
  );
  jobs.upsert({ ...jobs.get('j1')!, status: 'COMPLETED', output: { mean: 2 } });
  assert.deepEqual(jobs.pending(), []);
  jobs.upsert({ ...base, id: 'j3', status: 'FAILED', error: 'boom', submittedAt: 3 });
  assert.deepEqual(
    jobs.all().map((j) => j.id),
    ['j3', 'j2'],
  ); // the oldest went past the limit
  assert.deepEqual(
    jobNodes(jobs).map((n) => `${n.label} ${n.icon}/${n.iconColor} ${n.description} ${n.contextValue}`),
    [
      'cpu-stats error/testing.iconFailed failed · production · j3 strato.job.queue.FAILED',
      'cpu-stats pass/testing.iconPassed completed · production · j2 strato.job.queue.COMPLETED',
    ],
  );
  assert.match(jobReport(jobs.get('j2')!), /status: COMPLETED[\s\S]*"mean": 1/);
  assert.match(jobReport(jobs.get('j3')!), /error: boom/);
  jobs.upsert({ ...base, id: 'j4', status: 'IN_PROGRESS', submittedAt: 4 });
  jobs.upsert({ ...base, id: 'j5', status: 'IN_PROGRESS', submittedAt: 5, viaDev: true });
  assert.deepEqual(
    jobNodes(jobs).map((n) => `${n.icon} ${n.contextValue}`),
    ['sync~spin strato.job.call.IN_PROGRESS', 'sync~spin strato.job.queue.IN_PROGRESS'],
    'a call through the dev server has nothing to cancel, stream or retry',
  );
  assert.deepEqual(
    jobs.pending().map((j) => j.id),
    ['j4'],
  );
  // The menus of package.json key on these context values: cancel while queued or running, retry once FAILED or TIMED_OUT.
  assert.deepEqual(
    ['strato.job.queue.IN_PROGRESS', 'strato.job.queue.FAILED', 'strato.job.queue.COMPLETED', 'strato.job.call.ERROR'].map((v) =>
      ['strato.showJob', 'strato.streamJob', 'strato.cancelJob', 'strato.retryJob'].filter((c) => offered(c, v)).join(' '),
    ),
    [
      'strato.showJob strato.streamJob strato.cancelJob',
      'strato.showJob strato.streamJob strato.retryJob',
      'strato.showJob strato.streamJob',
      'strato.showJob',
    ],
  );
});

test('a command reads its project, environment, endpoint and job from whatever the place it is offered passes', () => {
  const endpointNode = { id: 'ep:/ws/shop:cpu-stats', label: 'cpu-stats', endpoint: 'cpu-stats', root: '/ws/shop', contextValue: 'strato.endpoint.QUEUE' };
  const deployment = { ...endpointNode, id: 'ep:/ws/shop:cpu-stats:env:production', label: 'production', environment: 'production' };
  const envItem = { id: 'env:shop:production', label: 'production', environment: 'production', contextValue: 'strato.environment' };
  const lens = { endpoint: 'cpu-stats', function: 'cpu_stats', file: 'cpu_worker.py', uri: 'file:///ws/shop/cpu_worker.py', kind: 'QUEUE' };
  const viewTitle = { $treeViewId: 'strato.endpoints', $focusedTreeItem: true };
  const uri = { scheme: 'file', fsPath: '/ws/shop/cpu_worker.py', toString: () => 'file:///ws/shop/cpu_worker.py' };
  assert.deepEqual([undefined, viewTitle, endpointNode, lens, uri, '/ws/shop', { folder: '/ws/shop' }, 42].map(folderHintOf), [
    undefined,
    undefined,
    '/ws/shop',
    'file:///ws/shop/cpu_worker.py',
    '/ws/shop/cpu_worker.py',
    '/ws/shop',
    '/ws/shop',
    undefined,
  ]);
  // A deploy never takes its environment from a focused node; undeploy and env get take it from an environment's item.
  assert.deepEqual([deployment, envItem, viewTitle, 'staging', { environment: 'staging' }].map(environmentOf), [
    undefined,
    undefined,
    undefined,
    'staging',
    'staging',
  ]);
  assert.deepEqual([deployment, envItem, viewTitle].map(environmentItemOf), [undefined, 'production', undefined]);
  assert.deepEqual([endpointNode, deployment, lens, viewTitle, envItem].map(endpointTargetOf), [
    { endpoint: 'cpu-stats', environment: undefined, folder: '/ws/shop' },
    { endpoint: 'cpu-stats', environment: 'production', folder: '/ws/shop' },
    { endpoint: 'cpu-stats', folder: 'file:///ws/shop/cpu_worker.py' },
    undefined,
    undefined,
  ]);
  assert.deepEqual([{ id: 'job:sync-1-u1', label: 'cpu-stats' }, 'j2', viewTitle].map(jobIdOf), ['sync-1-u1', 'j2', undefined]);
  assert.equal(flagOf({ confirm: false }, 'confirm'), false);
  assert.equal(optionOf({ ...envItem, file: '/ws/shop/client.ts' }, 'file'), '/ws/shop/client.ts', 'a node with options added (tests, scripts)');
  assert.equal(optionOf(uri, 'scheme'), undefined);
});

test('the dev server live- endpoints count as deployments of the endpoint in the code', () => {
  const live: EnvironmentInfo = { app: 'shop', environment: 'live', endpoints: [{ name: 'live-cpu-stats', type: 'QUEUE', url: 'http://p/v2/l1', id: 'l1' }] };
  assert.deepEqual([...deployedStateOf([production, live]).entries()].map(([k, v]) => `${k}: ${v.map((d) => d.environment).join(',')}`).sort(), [
    'cpu-stats: production,live',
    'lb-api: production',
  ]);
  assert.equal(codeNameOf('live', 'live-cpu-stats'), 'cpu-stats');
  assert.equal(codeNameOf('production', 'live-cpu-stats'), 'live-cpu-stats');
  const [liveNode] = buildEnvironmentTree([live]);
  assert.equal(liveNode.children![0].endpoint, 'cpu-stats');
});

test('a worker traceback links its frames to the project files, not to installed packages', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-tb-'));
  try {
    fs.mkdirSync(path.join(dir, 'pkg'));
    fs.writeFileSync(path.join(dir, 'cpu_worker.py'), '');
    fs.writeFileSync(path.join(dir, 'pkg', 'util.py'), '');
    const locate = projectLocator(dir, (p) => fs.existsSync(p) && fs.statSync(p).isFile());
    const lines = linkTraceback(
      [
        'job sync-1-u1 failed: ValueError: bad',
        'Traceback (most recent call last):',
        '  File "/data/platform/builds/b1/cpu_worker.py", line 12, in cpu_stats',
        '    return helper(x)',
        '  File "/data/platform/builds/b1/pkg/util.py", line 3, in helper',
        '  File "/data/platform/builds/b1/deps/requests/api.py", line 9, in get',
        '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
        'ValueError: bad',
      ],
      locate,
    );
    assert.deepEqual(lines.slice(2, 7), [
      `  File ${path.join(dir, 'cpu_worker.py')}:12, in cpu_stats`,
      '    return helper(x)',
      `  File ${path.join(dir, 'pkg', 'util.py')}:3, in helper`,
      '  File "/data/platform/builds/b1/deps/requests/api.py", line 9, in get',
      '  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('activation signs: an import of strato, .strato/, Strato in pyproject.toml, or a top-level worker file', () => {
  assert.ok(importsStrato('import os\nfrom strato import Endpoint\n'));
  assert.ok(importsStrato('import strato\n'));
  assert.ok(importsStrato('  from strato.catalog import GpuGroup\n'));
  assert.ok(!importsStrato('import stratosphere\n# from strato import Endpoint is a comment? no: it starts with #\n'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'strato-sig-'));
  try {
    fs.writeFileSync(path.join(dir, 'main.py'), 'import numpy\n');
    fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\nname = "stratosphere"\n');
    assert.equal(folderLooksLikeStrato(dir), false, 'a Python project that does not use strato');
    fs.writeFileSync(path.join(dir, 'worker.py'), 'from strato import Endpoint\n');
    assert.equal(folderLooksLikeStrato(dir), true);
    fs.rmSync(path.join(dir, 'worker.py'));
    fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[project]\ndescription = "Serverless endpoints built with Strato"\n');
    assert.equal(folderLooksLikeStrato(dir), true, 'the strato init template');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("a route call's traceback is the last one its endpoint logged since the call, from one worker", () => {
  const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();
  const line = (s: number, worker: string, text: string, level: 'info' | 'error' = 'error') => ({ time: at(s), worker, stream: 'err' as const, level, text });
  const lines = [
    line(1, 'w-a', 'strato ERROR Traceback (most recent call last):'),
    line(1, 'w-a', 'strato ERROR ValueError: older call'),
    line(10, 'w-a', 'strato INFO  serving', 'info'),
    line(11, 'w-b', 'strato ERROR Traceback (most recent call last):'),
    line(11, 'w-a', 'strato ERROR unrelated'),
    line(11, 'w-b', 'strato ERROR   File "/b/lb_worker.py", line 9, in process'),
    line(11, 'w-b', 'strato ERROR RuntimeError: kaboom'),
  ];
  assert.deepEqual(
    lastTraceback(lines, Date.parse(at(10))).map((l) => l.text),
    ['strato ERROR Traceback (most recent call last):', 'strato ERROR   File "/b/lb_worker.py", line 9, in process', 'strato ERROR RuntimeError: kaboom'],
  );
  assert.deepEqual(lastTraceback(lines.slice(0, 3), Date.parse(at(10))), [], 'none since the call');
});
