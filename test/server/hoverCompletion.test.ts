// Hover and completion through the protocol, on finished and on half-typed code.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CompletionItem, Hover, MarkupContent } from 'vscode-languageserver/node';
import { TestClient, uriOf } from './lspClient';
import { copyWorkspace, type Workspace } from './workspace';
import { parameters } from '../../engine/src/catalog';

const DOC = `from strato import Endpoint, GpuGroup, GpuType, CpuInstanceType as CPU

api = Endpoint(name="api", cpu="cpu3c-2-4")


@Endpoint(name="embed", gpu=GpuGroup.ADA_24, workers=(0, 3), idle_timeout=30)
def embed(x):
    label = "cpu3c-2-4"
    return dict(workers=1, x=x)


@Endpoint(name="multi", gpu=["NVIDIA H200", GpuType.NVIDIA_L4])
def multi(x):
    # Endpoint(workers=1) in a comment, GpuGroup.AMPERE_80 in prose
    doc = "see GpuGroup.AMPERE_80"
    return x


@Endpoint(name="small", cpu=CPU.CPU5C_4_8)
def small(x):
    return x


@api.post("/run")
def run(x):
    return x
`;

const md = (h: Hover | null) => (h?.contents as MarkupContent | undefined)?.value ?? '';
const labels = (items: CompletionItem[]) => items.map((i) => i.label);

describe('hover and completion', () => {
  let ws: Workspace;
  let c: TestClient;
  let n = 0;
  const u = () => uriOf(ws.file('workers/features.py'));

  before(async () => {
    ws = copyWorkspace();
    c = TestClient.inMemory();
    await c.initialize({ folders: [ws.root] });
    await c.open(u(), DOC);
  });
  after(async () => {
    assert.deepEqual(c.errors(), []);
    await c.stop();
    ws.dispose();
  });

  /** Completion at the end of `text` (or at the `|` in it), in a fresh document. */
  async function complete(text: string): Promise<CompletionItem[]> {
    const uri = uriOf(ws.file(`workers/typing_${n++}.py`));
    const at = text.includes('|') ? text.indexOf('|') : text.length;
    await c.open(uri, text.replace('|', ''));
    return c.completion(
      uri,
      c.position(uri, text.replace('|', '').slice(0, at).split('\n').pop()!, text.replace('|', '').slice(0, at).split('\n').pop()!.length),
    );
  }

  it('hover on an Endpoint parameter: meaning, type, default and limits', async () => {
    const workers = md(await c.hover(u(), c.position(u(), 'workers=(0, 3)', 3)));
    assert.match(workers, /\*\*workers\*\*: `int \| tuple\[int, int\]`/);
    assert.match(workers, /Default: \(0, 1\)/);
    assert.match(workers, /Limits: 0 <= min <= max <= 100/);
    const idle = await c.hover(u(), c.position(u(), 'idle_timeout', 1));
    assert.match(md(idle), /Seconds a worker above the minimum stays idle/);
    assert.match(md(idle), /Default: 60/);
    assert.match(md(idle), /Limits: 1 to 3600/);
    assert.deepEqual(idle?.range, { start: c.position(u(), 'idle_timeout'), end: c.position(u(), 'idle_timeout', 12) });
  });

  it('hover on GPU and CPU values: enum members, strings in gpu=/cpu= and in lists', async () => {
    const group = await c.hover(u(), c.position(u(), 'GpuGroup.ADA_24', 10));
    assert.match(md(group), /\*\*ADA_24\*\*/);
    assert.match(md(group), /Memory: 24 GB per GPU/);
    assert.match(md(group), /NVIDIA GeForce RTX 4090/);
    assert.deepEqual(group?.range, { start: c.position(u(), 'GpuGroup.ADA_24'), end: c.position(u(), 'GpuGroup.ADA_24', 15) });
    assert.match(md(await c.hover(u(), c.position(u(), 'NVIDIA H200', 3))), /GPU model[\s\S]*Memory: 141 GB/);
    assert.match(md(await c.hover(u(), c.position(u(), 'GpuType.NVIDIA_L4', 12))), /Memory: 24 GB[\s\S]*Group: AMPERE_24/);
    assert.match(md(await c.hover(u(), c.position(u(), 'cpu3c-2-4', 2))), /2 vCPUs, 4 GB memory/);
    assert.match(md(await c.hover(u(), c.position(u(), 'CPU.CPU5C_4_8', 6))), /4 vCPUs, 8 GB memory \(family cpu5c\)/);
  });

  it('no hover outside Endpoint: other calls, plain strings, comments, names', async () => {
    assert.equal(await c.hover(u(), c.position(u(), 'dict(workers=1', 7)), null);
    assert.equal(await c.hover(u(), c.position(u(), 'label = "cpu3c-2-4"', 12)), null);
    assert.equal(await c.hover(u(), c.position(u(), '# Endpoint(workers=1)', 13)), null);
    assert.equal(await c.hover(u(), c.position(u(), 'def embed(x)', 5)), null);
    // An enum member named in a comment or a string is prose, not code.
    assert.equal(await c.hover(u(), c.position(u(), 'GpuGroup.AMPERE_80 in prose', 12)), null);
    assert.equal(await c.hover(u(), c.position(u(), 'GpuGroup.AMPERE_80"', 12)), null);
  });

  it('completion of parameter names in a half-typed Endpoint call, without those already given', async () => {
    const items = await complete('from strato import Endpoint\n\n@Endpoint(name="x", ');
    assert.deepEqual(
      labels(items),
      parameters.map((p) => p.name).filter((n) => n !== 'name'),
    );
    for (const name of ['volume', 'datacenter', 'scaler_type', 'min_cuda_version', 'system_dependencies', 'image', 'template', 'flashboot'])
      assert.ok(labels(items).includes(name), `${name} is offered`);
    // Accepting gpu= opens the value list at once (no Ctrl+Space); a free-form parameter does not.
    assert.equal(items.find((i) => i.label === 'gpu')?.command?.command, 'editor.action.triggerSuggest');
    assert.equal(items.find((i) => i.label === 'env')?.command, undefined);
    const gpu = items[0];
    assert.equal(gpu.textEdit && 'newText' in gpu.textEdit ? gpu.textEdit.newText : '', 'gpu=');
    assert.match((gpu.documentation as MarkupContent).value, /Mutually exclusive with cpu/);
    // A partly typed name, and keywords after the cursor.
    const partial = await complete('from strato import Endpoint\n\n@Endpoint(name="x", work|, gpu="ADA_24")\ndef f(x):\n    return x\n');
    assert.ok(labels(partial).includes('workers'));
    assert.ok(!labels(partial).includes('gpu') && !labels(partial).includes('name'));
    const range = partial[0].textEdit && 'range' in partial[0].textEdit ? partial[0].textEdit.range : undefined;
    assert.ok(range);
    assert.equal(range.end.character - range.start.character, 4);
  });

  it('completion of GPU values: enum members when imported, ids inside strings and lists', async () => {
    const enums = labels(await complete('from strato import Endpoint, GpuGroup, GpuType\n\n@Endpoint(name="x", gpu='));
    assert.ok(enums.includes('GpuGroup.ADA_24') && enums.includes('GpuType.NVIDIA_H200'), enums.join());
    const strings = await complete('from strato import Endpoint\n\n@Endpoint(name="x", gpu="AD');
    assert.ok(labels(strings).includes('ADA_24') && labels(strings).includes('NVIDIA H200'));
    const edit = strings.find((i) => i.label === 'ADA_24')!.textEdit;
    assert.ok(edit && 'range' in edit && edit.range.end.character - edit.range.start.character === 2);
    const list = labels(await complete('from strato import Endpoint, GpuGroup\n\n@Endpoint(name="x", gpu=[GpuGroup.ADA_24, '));
    assert.ok(list.includes('GpuGroup.AMPERE_80'));
    const bare = labels(await complete('from strato import Endpoint\n\n@Endpoint(name="x", gpu='));
    assert.ok(bare.includes('"ADA_24"'));
  });

  it('completion of CPU shapes, with the alias the file uses', async () => {
    const aliased = labels(await complete('from strato import Endpoint, CpuInstanceType as CPU\n\n@Endpoint(name="x", cpu='));
    assert.ok(aliased.includes('CPU.CPU3C_2_4'), aliased.join());
    const inString = labels(await complete('import strato\n\n@strato.Endpoint(name="x", cpu="cpu'));
    assert.deepEqual(inString.slice(0, 2), ['cpu3g-1-4', 'cpu3g-2-8']);
    const viaModule = labels(await complete('import strato\n\n@strato.Endpoint(name="x", cpu='));
    assert.ok(viaModule.includes('strato.CpuInstanceType.CPU5C_8_16'));
  });

  it("the reference product's parameters: datacenter, CUDA and scaler values complete and hover", async () => {
    const dcs = labels(await complete('from strato import Endpoint, DataCenter\n\n@Endpoint(name="x", datacenter='));
    assert.ok(dcs.includes('DataCenter.EU_RO_1') && dcs.includes('DataCenter.US_KS_2'), dcs.join());
    const dcStrings = labels(await complete('from strato import Endpoint\n\n@Endpoint(name="x", datacenter="EU'));
    assert.ok(dcStrings.includes('EU-RO-1'));
    const cuda = labels(await complete('from strato import Endpoint, CudaVersion\n\n@Endpoint(name="x", min_cuda_version='));
    assert.ok(cuda.includes('CudaVersion.V12_8') && cuda.includes('CudaVersion.V13_0'), cuda.join());
    const scaler = labels(await complete('import strato\n\n@strato.Endpoint(name="x", scaler_type='));
    assert.deepEqual(scaler, ['strato.ServerlessScalerType.QUEUE_DELAY', 'strato.ServerlessScalerType.REQUEST_COUNT']);

    const uri = uriOf(ws.file('workers/reference_style.py'));
    const text =
      'from strato import Endpoint, DataCenter, NetworkVolume\n\nvol = NetworkVolume(name="models", datacenter=DataCenter.US_KS_2)\n\n' +
      '@Endpoint(name="ref", volume=vol, datacenter="eu_ro_1", scaler_type="request_count")\ndef ref(x):\n    return x\n';
    await c.open(uri, text);
    assert.match(md(await c.hover(uri, c.position(uri, 'DataCenter.US_KS_2', 12))), /US-KS-2.*Kansas/);
    assert.match(md(await c.hover(uri, c.position(uri, 'eu_ro_1', 2))), /EU-RO-1.*Romania/);
    assert.match(md(await c.hover(uri, c.position(uri, 'volume=vol', 2))), /STRATO_VOLUME_PATH/);
    assert.match(md(await c.hover(uri, c.position(uri, 'request_count', 2))), /REQUEST_COUNT/);
    // The volume in US-KS-2 and datacenter EU-RO-1 contradict each other: one problem, on datacenter=, with a fix.
    const problems = await c.diagnostics(uri);
    assert.deepEqual(
      problems.map((d) => d.code),
      ['volume-datacenter'],
    );
  });

  it('completion of enum members after the class name, anywhere', async () => {
    const items = await complete('from strato import GpuGroup\n\nDEFAULT = GpuGroup.');
    assert.ok(labels(items).includes('ADA_24') && labels(items).includes('HOPPER_141'));
    assert.match(items.find((i) => i.label === 'HOPPER_141')!.detail!, /H200/);
  });

  it('completion of HTTP methods on a route decorator', async () => {
    const items = await complete('from strato import Endpoint\n\napi = Endpoint(name="api")\n\n\n@api.');
    assert.deepEqual(labels(items), ['get', 'post', 'put', 'patch', 'delete']);
    const partial = await complete('from strato import Endpoint\n\napi = Endpoint(name="api")\n\n\n@api.po|\ndef f(x):\n    return x\n');
    assert.ok(labels(partial).includes('post'));
  });

  it('no completion outside Endpoint calls or in comments', async () => {
    assert.deepEqual(await complete('from strato import Endpoint\n\nprint('), []);
    assert.deepEqual(await complete('from strato import Endpoint\n\n# @Endpoint('), []);
    assert.deepEqual(await complete('from other import Endpoint\n\n@Endpoint('), []);
    // Nor enum members or route methods in a comment, a string or a docstring.
    assert.deepEqual(await complete('from strato import Endpoint, GpuGroup\n\n# use GpuGroup.'), []);
    assert.deepEqual(await complete('from strato import Endpoint, GpuGroup\n\nnote = "GpuGroup.'), []);
    assert.deepEqual(
      await complete('from strato import Endpoint\n\napi = Endpoint(name="api")\n\n\ndef f(x):\n    """Usage:\n    @api.|\n    """\n    return x\n'),
      [],
    );
  });
});
