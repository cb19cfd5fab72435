// Placement of workers on hosts (workers/hosts.ts): datacenter, volumes, GPUs free and big enough, the driver's CUDA
// version, and load. The hosts are the platform's own machine and registered worker hosts, as the agent API makes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DeployedEndpoint } from '../../engine/src/platform/controlPlane/service';
import type { ResolvedEndpointConfig } from '../../engine/src/platform/controlPlane/endpointConfig';
import { GpuAllocator } from '../../engine/src/platform/workers/gpus';
import { HostChecks } from '../../engine/src/platform/workers/hostChecks';
import { HostPool, localHost, type WorkerHost } from '../../engine/src/platform/workers/hosts';
import { RemoteHost } from '../../engine/src/platform/workers/remoteHost';

function pool(...remote: Array<{ name: string; datacenter?: string; gpus?: string[]; cuda?: string }>): HostPool {
  const inv = { count: 0, names: [] };
  const p = new HostPool(localHost(['EU-RO-1'], inv, new GpuAllocator(inv), new HostChecks(inv)));
  for (const r of remote)
    p.add(new RemoteHost(`h-${r.name}`, { name: r.name, datacenter: r.datacenter, cpus: 4, gpus: r.gpus ?? [], cudaVersion: r.cuda, version: '' }, (id) => id));
  return p;
}

let n = 0;
function endpoint(c: Partial<ResolvedEndpointConfig>): DeployedEndpoint {
  const config = { kind: 'QUEUE', cpu: 'cpu3c-1-2', gpuCount: 1, volumes: [], minCudaVersion: '11.8', ...c } as ResolvedEndpointConfig;
  return { id: `ep${++n}`, name: `ep${n}`, appId: 'a', environmentId: 'e', buildId: 'b', config, revision: 1, createdAt: 0, updatedAt: 0 };
}
const name = (h: WorkerHost | string) => (typeof h === 'string' ? h : h.name);

test('an endpoint pinned to a datacenter goes to a host there, or says which hosts there are', () => {
  const p = pool({ name: 'kansas', datacenter: 'US-KS-2' });
  assert.equal(name(p.place(endpoint({ datacenters: ['US-KS-2'] }))), 'kansas');
  assert.match(
    name(p.place(endpoint({ datacenters: ['US-IL-1'] }))),
    /^no worker host serves US-IL-1: the hosts are .* \(EU-RO-1\), kansas \(US-KS-2\); start one there/,
  );
  assert.equal(p.unplaceable(endpoint({ datacenters: ['US-IL-1'] })), name(p.place(endpoint({ datacenters: ['US-IL-1'] }))), 'the same sentence');
  assert.equal(p.unplaceable(endpoint({ datacenters: ['US-KS-2'] })), null);
  assert.deepEqual(p.served()?.sort(), ['EU-RO-1', 'US-KS-2']);
});

test("an endpoint with volumes, and a load-balanced one, stay on the platform's machine", () => {
  const p = pool({ name: 'anywhere' });
  const local = p.local.name;
  for (let i = 0; i < 3; i++) p.local.workers++; // the platform's machine is the busier one
  assert.equal(name(p.place(endpoint({ volumes: [{ name: 'v', size: 10, datacenter: 'EU-RO-1' }] }))), local);
  assert.equal(name(p.place(endpoint({ kind: 'LOAD_BALANCED' }))), local);
  assert.equal(name(p.place(endpoint({}))), 'anywhere', 'a plain CPU endpoint goes where the load is lower');
});

test('a GPU endpoint goes to a host with enough free GPUs and a new enough driver, and waits when all are held', () => {
  const p = pool({ name: 'old', gpus: ['g0', 'g1'], cuda: '12.2' }, { name: 'new', gpus: ['g0'], cuda: '12.8' });
  const gpu = (c: Partial<ResolvedEndpointConfig> = {}) => endpoint({ cpu: undefined, gpuIds: 'any', ...c });
  assert.equal(name(p.place(gpu({ minCudaVersion: '12.4' }))), 'new');
  assert.equal(name(p.place(gpu({ gpuCount: 2 }))), 'old');
  assert.match(name(p.place(gpu({ gpuCount: 3 }))), /asks for 3 GPUs per worker \(gpu_count\) and no worker host has that many/);
  const nw = p.get('h-new')!;
  nw.gpus.assign('w1', 'x', { count: 1 });
  assert.match(name(p.place(gpu({ minCudaVersion: '12.4' }))), /waiting for a free GPU: all 1 GPU is held/);
  assert.equal(p.unplaceable(gpu({ minCudaVersion: '12.4' })), null, 'one host has the driver: not blocked, waiting');
  assert.match(p.unplaceable(gpu({ gpuCount: 3 })) ?? '', /no worker host has that many: its workers cannot start/, 'blocked while the hosts stay as they are');
  assert.equal(name(p.place(gpu())), 'old');
  assert.equal(p.gpuNote(gpu()), null, 'GPUs exist: no "runs on the CPU" note');
});

test('a GPU endpoint goes to a host with GPUs of the kind it asks for, waits for those, and runs on other GPUs only where no host has its kind', () => {
  const p = pool({ name: 'hopper', gpus: ['NVIDIA H200'] }, { name: 'mixed', gpus: ['NVIDIA RTX A4000', 'NVIDIA L4'] });
  const gpu = (gpuIds: string, c: Partial<ResolvedEndpointConfig> = {}) => endpoint({ cpu: undefined, gpuIds, ...c });
  assert.equal(name(p.place(gpu('HOPPER_141'))), 'hopper', 'by group');
  assert.equal(name(p.place(gpu('NVIDIA L4'))), 'mixed', 'by model');
  assert.equal(name(p.place(gpu('AMPERE_80,AMPERE_24'))), 'mixed', 'any of several kinds');
  const mixed = p.get('h-mixed')!;
  assert.equal(mixed.gpus.assign('w1', 'e', { count: 1, gpuIds: 'AMPERE_24' }), '1', 'the L4 (index 1), not the A4000 before it');
  assert.equal(mixed.gpus.assign('w2', 'e', { count: 1, gpuIds: 'AMPERE_24' }), null, 'the only L4 is held');
  assert.match(name(p.place(gpu('AMPERE_24'))), /^waiting for a free GPU: all 1 AMPERE_24 GPU is held by workers of 1 endpoint/);
  assert.match(name(p.place(gpu('AMPERE_24', { gpuCount: 2 }))), /asks for 2 GPUs per worker \(gpu_count\) and this machine has 1 AMPERE_24/);
  assert.equal(p.gpuNote(gpu('AMPERE_24')), null, 'a host has the kind: no note');
  // No host has a B200: the workers run on the GPUs there are, and the health says so.
  assert.equal(name(p.place(gpu('BLACKWELL_180'))), 'hopper', 'any free GPU, the least loaded host');
  assert.equal(
    p.gpuNote(gpu('BLACKWELL_180')),
    'the endpoint asks for BLACKWELL_180 GPUs and no worker host has one (they have 1 x NVIDIA H200, 1 x NVIDIA RTX A4000, 1 x NVIDIA L4): its workers run on those',
  );
  assert.equal(
    new GpuAllocator({ count: 1, names: ['NVIDIA H200'] }).note('ADA_24'),
    'the endpoint asks for ADA_24 GPUs and this machine has 1 x NVIDIA H200: its workers run on those',
  );
  // An endpoint that names no kind (the manifest's default) waits for any GPU, and the message names none.
  const two = pool({ name: 'a', gpus: ['NVIDIA H200'] }, { name: 'b', gpus: ['NVIDIA L4'] });
  two.get('h-a')!.gpus.assign('w3', 'e', { count: 1 });
  two.get('h-b')!.gpus.assign('w4', 'e', { count: 1 });
  assert.equal(
    name(two.place(endpoint({ cpu: undefined, gpuIds: undefined }))),
    'waiting for a free GPU: all 2 GPUs of 2 worker hosts are held; jobs wait until one is free (a GPU belongs to one worker at a time)',
  );
});
