import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPair } from './support.ts';

/**
 * The door <-> instance link: our own framing (lib/functions/runner/protocol.mjs: streams, RESET, CREDIT windows)
 * against node:http2 over the same kind of unix socket, for the same warm request, in the same run. Both pairs are
 * the floor's minimal door and instance (bench/functions.ts floorPair): the door parses the caller's HTTP/1.1 and
 * sends the request over the link; the instance builds the Web Request and Response as the runner does. The issue
 * keeps our framing only if HTTP/2 costs more than a tenth of the door's warm figure (`npm run bench -- functions`
 * prints both pairs beside the door).
 */
export async function http2Pair(): Promise<{ port: number; stop: () => void }> {
  const socketPath = join(tmpdir(), `slipway-h2-${process.pid}-${randomBytes(3).toString('hex')}.sock`);
  const instance = `
    import http2 from 'node:http2';
    const server = http2.createServer();
    server.on('stream', async (stream, head) => {
      const headers = [];
      for (const [name, value] of Object.entries(head)) if (!name.startsWith(':')) headers.push([name, String(value)]);
      new Request('http://floor/', { headers });
      const reply = new Response('hello');
      const out = { ':status': reply.status };
      reply.headers.forEach((value, name) => (out[name] = value));
      stream.respond(out);
      const reader = reply.body.getReader();
      for (;;) { const { done, value } = await reader.read(); if (done) break; stream.write(value); }
      stream.end();
    });
    server.listen(${JSON.stringify(socketPath)}, () => console.log('ready'));`;
  const door = `
    import http from 'node:http';
    import http2 from 'node:http2';
    import net from 'node:net';
    const session = http2.connect('http://floor', { createConnection: () => net.connect(${JSON.stringify(socketPath)}) });
    const HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);
    const server = http.createServer((req, res) => {
      const headers = { ':method': req.method, ':path': req.url, ':authority': req.headers.host ?? 'floor' };
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const name = req.rawHeaders[i].toLowerCase();
        if (!HOP.has(name)) headers[name] = req.rawHeaders[i + 1];
      }
      const stream = session.request(headers, { endStream: true });
      let status = 502;
      const body = [];
      stream.on('response', (head) => (status = head[':status']));
      stream.on('data', (chunk) => body.push(chunk));
      stream.on('end', () => {
        const all = Buffer.concat(body);
        res.writeHead(status, { 'content-length': String(all.length) });
        res.end(all);
      });
    });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
  return startPair(instance, door, socketPath);
}

/** What HTTP/2 costs per request beyond our framing, in microseconds (from two throughputs of the same load). */
export function linkCostMicros(framingRps: number, http2Rps: number): number {
  return (1 / http2Rps - 1 / framingRps) * 1e6;
}
