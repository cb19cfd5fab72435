// A free TCP port of 127.0.0.1 for a server a test starts in another process (code-server, PostgreSQL, `strato
// serve`): the port is closed again before it is handed out, so the process may bind it.
import net from 'node:net';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
    s.on('error', reject);
  });
}
