// The floors bench/platform-jobs.ts measures the platform against, in the same run and with the same client: each is
// the source of a process of its own (node -e), so that it shares nothing with the bench or the platform.

/** A bare Node HTTP server that answers each body as it came: the least a round trip over HTTP costs. */
export const ECHO = `
const http = require('http');
const s = http.createServer((req, res) => {
  const parts = [];
  req.on('data', (c) => parts.push(c));
  req.on('end', () => {
    const body = Buffer.concat(parts);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    res.end(body);
  });
});
s.keepAliveTimeout = 65000;
s.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + s.address().port));
`;

// The design's floor: HTTP in, one length-prefixed frame to a Python process over loopback TCP, its reply out.
export const RELAY_PY = `
import json, socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
f = s.makefile("rb")
while True:
    head = f.read(4)
    if len(head) < 4:
        break
    job = json.loads(f.read(int.from_bytes(head, "big")))
    out = json.dumps({"status": "COMPLETED", "output": job.get("input")}).encode()
    s.sendall(len(out).to_bytes(4, "big") + out)
`;
/** The relay's Node side (run with RELAY_PYTHON and RELAY_PY in its environment): prints the URL it listens on. */
export const RELAY = `
const http = require('http'), net = require('net'), { spawn } = require('child_process');
let sock = null, buf = Buffer.alloc(0);
const waiting = [];
const workers = net.createServer((s) => {
  sock = s;
  s.setNoDelay(true);
  s.on('data', (d) => {
    buf = buf.length ? Buffer.concat([buf, d]) : d;
    while (buf.length >= 4) {
      const n = buf.readUInt32BE(0);
      if (buf.length < 4 + n) break;
      const frame = buf.subarray(4, 4 + n);
      buf = buf.subarray(4 + n);
      waiting.shift()(frame);
    }
  });
  const h = http.createServer((req, res) => {
    const parts = [];
    req.on('data', (c) => parts.push(c));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const head = Buffer.alloc(4);
      head.writeUInt32BE(body.length);
      waiting.push((f) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': f.length });
        res.end(f);
      });
      sock.write(Buffer.concat([head, body]));
    });
  });
  h.keepAliveTimeout = 65000;
  h.listen(0, '127.0.0.1', () => console.log('listening on http://127.0.0.1:' + h.address().port));
});
workers.listen(0, '127.0.0.1', () => spawn(process.env.RELAY_PYTHON, ['-c', process.env.RELAY_PY, String(workers.address().port)], { stdio: 'inherit' }));
`;
