// The platform listens on loopback only; containers reach it through this forwarder on the preview network's
// gateway address (the host side of the bridge), so nothing is exposed beyond this machine and its containers.
import net from 'node:net';

export interface Forwarder {
  port: number;
  close(): Promise<void>;
}

export async function forward(host: string, toPort: number): Promise<Forwarder> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((inbound) => {
    const outbound = net.connect(toPort, '127.0.0.1');
    for (const s of [inbound, outbound]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        inbound.destroy();
        outbound.destroy();
      });
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
