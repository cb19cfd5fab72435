// The HTTP layer under every client (engine/src/api/http.ts): a kept-alive connection that the server or a proxy
// closed while it was idle fails as it is reused, before the request reached anyone (seen in CI behind a round-robin
// front as ECONNRESET); the request is sent again on a new connection instead of failing the command.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { send } from '../../engine/src/api/http';

const servers: net.Server[] = [];
const sockets = new Set<net.Socket>();
after(() => {
  // The client keeps its connection alive: the server's side of it is closed too, or the process would not end.
  for (const s of sockets) s.destroy();
  for (const s of servers) s.close();
});

/**
 * A server that answers the first request of each connection with keep-alive, then resets the connection when the
 * next request arrives on it, as a server whose idle timeout ran out at that moment does.
 */
async function resettingServer(): Promise<{ url: string; answered: string[]; resets: () => number }> {
  const answered: string[] = [];
  let resets = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let served = false;
    let buffered = '';
    socket.on('data', (chunk) => {
      if (served) {
        resets++;
        socket.resetAndDestroy();
        return;
      }
      buffered += chunk.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = Number(/content-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      served = true;
      answered.push(`${buffered.split(' ', 2).join(' ')} ${buffered.slice(end + 4, end + 4 + length)}`);
      const body = JSON.stringify({ n: answered.length });
      socket.write(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: keep-alive\r\n\r\n${body}`);
    });
    socket.on('error', () => undefined);
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, answered, resets: () => resets };
}

test('a request on a kept-alive connection the server reset unanswered is sent again on a new one, once', async () => {
  const s = await resettingServer();
  const target = { baseUrl: s.url, apiKey: 'k' };
  assert.deepEqual((await send(target, 'GET', '/a')).body, { n: 1 });
  // The agent reuses the first connection: the server resets it, and the request goes again on a fresh one.
  const second = await send(target, 'POST', '/b', { body: { x: 1 } });
  assert.equal(s.resets(), 1, 'the reused connection was reset');
  assert.deepEqual(second.body, { n: 2 });
  assert.deepEqual(s.answered, ['GET /a ', 'POST /b {"x":1}'], 'each request reached the server once');
});
