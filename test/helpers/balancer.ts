// A round-robin front for platform nodes, as a load balancer would be: each request (whole, with its body and its
// answer streamed) goes to the next node in turn, so consecutive requests of one client reach different nodes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Balancer {
  /** http://127.0.0.1:<port> */
  url: string;
  /** The nodes requests are spread over, in turn (set or changed at any time). */
  targets: string[];
  close(): Promise<void>;
}

export async function startBalancer(targets: string[] = []): Promise<Balancer> {
  let next = 0;
  const b: Balancer = { url: '', targets, close: async () => undefined };
  const server = http.createServer((req, res) => {
    if (b.targets.length === 0) {
      res.writeHead(503).end('no node yet');
      return;
    }
    const target = new URL(req.url ?? '/', b.targets[next++ % b.targets.length]);
    const up = http.request(target, { method: req.method, headers: { ...req.headers, host: target.host } }, (r) => {
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  b.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  b.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return b;
}
