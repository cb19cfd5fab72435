// The job channel (docs/worker-protocol.md) on a real platform with real Python workers: workers take their jobs over
// it; CONNECT without a worker's token, on another path or with a malformed path is refused with a clear HTTP answer;
// a second channel of a worker replaces the first (whose worker is told to exit); a frame that is not JSON, an
// unknown frame, a frame over the limit or a done frame the platform cannot take closes the channel, and the endpoint
// goes on serving; the HTTP form of the protocol answers such messages with 400.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { FrameReader } from '../../engine/src/platform/workerChannel';
import { buildTestArtifact } from '../helpers/artifact';
import { queueSpec } from '../helpers/testWorkers';
import { call, deploy, startTestPlatform, waitUntil, type TestPlatform } from '../helpers/platform';

const WORKER = `
import os


def whoami():
    # What the platform gave this worker: the test speaks the protocol in its name.
    return {"token": os.environ["STRATO_WORKER_TOKEN"], "workerId": os.environ["STRATO_WORKER_ID"]}
`;

let tp: TestPlatform;
let ep: { id: string; url: string };

before(async () => {
  tp = await startTestPlatform();
  const art = await buildTestArtifact({ 'worker.py': WORKER }, [queueSpec('who', 'whoami', { workers: [1, 1] })]);
  ep = (await deploy(tp.cp, art)).who;
});

after(async () => {
  await tp?.close();
});

interface Tunnel {
  head: string;
  socket: net.Socket;
  frames: unknown[];
  closed: Promise<void>;
}

/** Sends CONNECT on a raw connection; resolves with the answer's head and, on 200, the frames that follow. */
function connect(path: string, token: string | null): Promise<Tunnel> {
  const { port } = new URL(tp.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const frames: unknown[] = [];
    const reader = new FrameReader(1 << 20);
    const closed = new Promise<void>((r) => socket.on('close', () => r()));
    let buf = Buffer.alloc(0);
    let head: string | null = null;
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      if (head === null) {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = buf.subarray(0, end).toString();
        const rest = buf.subarray(end + 4);
        if (!head.startsWith('HTTP/1.1 200')) head += `\n\n${rest.toString()}`;
        else for (const f of reader.push(rest)) frames.push(JSON.parse(f.toString()));
        resolve({ head, socket, frames, closed });
        return;
      }
      for (const f of reader.push(chunk)) frames.push(JSON.parse(f.toString()));
    });
    const auth = token === null ? '' : `Authorization: Bearer ${token}\r\n`;
    socket.write(`CONNECT ${path} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`);
  });
}

const frame = (text: string) => {
  const body = Buffer.from(text);
  const head = Buffer.alloc(4);
  head.writeUInt32BE(body.length);
  return Buffer.concat([head, body]);
};

async function whoami(): Promise<{ token: string; workerId: string }> {
  const r = await call('POST', `${ep.url}/runsync`, { body: { input: {} } });
  const j = r.json as { status: string; output: { token: string; workerId: string } };
  assert.equal(j.status, 'COMPLETED', r.text);
  return j.output;
}

describe('the job channel', () => {
  test("workers take their jobs over it (their log says so) and the worker's jobs run", async () => {
    await whoami();
    const log = await waitUntil('the ready line', async () => {
      const r = await call('GET', `${tp.url}/v2/${ep.id}/logs?tail=200`);
      const lines = (r.json as { lines: { text: string }[] }).lines.map((l) => l.text);
      return lines.find((l) => /ready: up to 1 job\(s\) at once/.test(l));
    });
    assert.match(log, /over the job channel/);
  });

  test('CONNECT without the worker token, on another path or with a malformed path is refused in plain HTTP', async () => {
    const { token } = await whoami();
    const noToken = await connect(`/_worker/${ep.id}/channel`, null);
    assert.match(noToken.head, /^HTTP\/1.1 401/);
    assert.match(noToken.head, /unknown worker or wrong worker token/);
    await noToken.closed;
    const wrong = await connect(`/_worker/${ep.id}/channel`, 'not-the-token');
    assert.match(wrong.head, /^HTTP\/1.1 401/);
    const otherEndpoint = await connect(`/_worker/nope/channel`, token);
    assert.match(otherEndpoint.head, /^HTTP\/1.1 401/);
    const elsewhere = await connect(`/v2/${ep.id}/runsync`, token);
    assert.match(elsewhere.head, /^HTTP\/1.1 404/);
    assert.match(elsewhere.head, /CONNECT is only for a worker job channel/);
    const malformed = await connect(`/_worker/%ZZ/channel`, token);
    assert.match(malformed.head, /^HTTP\/1.1 400/);
  });

  test('a second channel replaces the first, whose worker is told to exit; bad frames close the channel; the endpoint goes on', async () => {
    const first = await whoami();
    // The test takes the worker's place: the worker gets an exit frame and ends; another one starts in its place.
    const mine = await connect(`/_worker/${ep.id}/channel`, first.token);
    assert.match(mine.head, /^HTTP\/1.1 200/);
    await mine.closed; // closed by the platform once the worker it took over has exited
    const next = await whoami();
    assert.notEqual(next.workerId, first.workerId, 'a new worker serves the endpoint');
    // Frames the platform cannot read close the channel they came on; the service is not disturbed.
    const deep = `{"op":"done","jobId":"x","output":${'['.repeat(200_000)}${']'.repeat(200_000)}}`;
    const bads = [frame('{"op":'), frame('{"op":"dance"}'), Buffer.from([0xff, 0xff, 0xff, 0xff]), frame('{"op":"done","jobId":{"toString":1}}'), frame(deep)];
    for (const bad of bads) {
      // Each time in the place of the worker now serving (the one before was told to exit).
      const t = await connect(`/_worker/${ep.id}/channel`, (await whoami()).token);
      assert.match(t.head, /^HTTP\/1.1 200/);
      t.socket.write(bad);
      await t.closed;
    }
    const again = await whoami();
    assert.ok(again.workerId);
    assert.ok(tp.logs.some((l) => /sent a job channel frame that is not JSON/.test(l)));
    assert.ok(tp.logs.some((l) => /sent an unknown job channel frame \(op "dance"\)/.test(l)));
    assert.ok(tp.logs.some((l) => /a frame of 4294967295 bytes is over the limit/.test(l)));
    // A done frame the platform cannot take (no string job id, an output nested past what can be encoded) closes the
    // channel too: before, either one threw out of the socket's handler and ended the platform process.
    assert.ok(tp.logs.some((l) => /was refused \(the worker message needs "jobId", the id of its job as a string\)/.test(l)));
    assert.ok(tp.logs.some((l) => /was refused \(the worker sent the output nested too deeply to encode as JSON\)/.test(l)));
  });

  test('the HTTP worker protocol answers 400 to a message it cannot take, and goes on', async () => {
    const { token } = await whoami();
    const post = (op: string, body: string) => call('POST', `${tp.url}/_worker/${ep.id}/${op}`, { raw: body, auth: `Bearer ${token}` });
    const noJob = await post('done', '{"jobId":{"toString":1}}');
    assert.deepEqual([noJob.status, noJob.json], [400, { error: 'the worker message needs "jobId", the id of its job as a string' }]);
    const streamed = await post('stream', '{"jobId":7,"chunks":[]}');
    assert.equal(streamed.status, 400);
    const deep = await post('done', `{"jobId":"x","output":${'['.repeat(200_000)}${']'.repeat(200_000)}}`);
    assert.deepEqual([deep.status, deep.json], [400, { error: 'the worker sent the output nested too deeply to encode as JSON' }]);
    const beat = await post('heartbeat', '{"jobs":[{"toString":1},"j1"]}');
    assert.equal(beat.status, 200, beat.text);
    assert.ok((await whoami()).workerId);
  });
});
