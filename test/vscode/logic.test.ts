// The extension's pure logic, with plain node (no VS Code): the Endpoints/Environments trees built from a real
// project model (the `strato init` template), the run input prefilled from parameters, the environment pick, jobs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { templateFiles } from '../../engine/src/init/template';
import { analyzeFiles } from '../helpers/analysis';
import { buildEndpointTree, buildEnvironmentTree, deployedStateOf, environmentOfNode, type EnvironmentInfo } from '../../client/src/endpointTree';
import { functionOf, parseInput, prefillInput } from '../../client/src/inputs';
import { checkEnvironmentName, environmentItems, NEW_ENVIRONMENT, onlyChoice } from '../../client/src/environmentPick';
import { JobList, jobNodes, jobReport } from '../../client/src/jobs';

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
});

test('a new environment name is checked before anything is built', () => {
  assert.equal(checkEnvironmentName('staging', []), undefined);
  assert.match(checkEnvironmentName('', [])!, /type a name/);
  assert.match(checkEnvironmentName('bad name', [])!, /letters, digits/);
  assert.match(checkEnvironmentName('live', [])!, /dev server/);
  assert.match(checkEnvironmentName('staging', [{ name: 'staging' }])!, /exists already/);
});

test('the Jobs list keeps submitted jobs newest first, tracks pending ones and reports output', () => {
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
    jobNodes(jobs).map((n) => `${n.label} ${n.icon} ${n.description}`),
    ['cpu-stats error failed · j3', 'cpu-stats pass completed · j2'],
  );
  assert.match(jobReport(jobs.get('j2')!), /status: COMPLETED[\s\S]*"mean": 1/);
  assert.match(jobReport(jobs.get('j3')!), /error: boom/);
});
