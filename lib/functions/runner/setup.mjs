// The runner process's set-up (runner.mjs): the egress bridge, proxied https agents, warming undici, and the
// control channel to the host. Plain JavaScript, Node built-ins only.

import http from 'node:http';
import https from 'node:https';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/** Starts the loopback TCP bridge to the egress proxy's unix socket. */
export function startEgressBridge(socketPath, port) {
  const server = net.createServer((client) => {
    const upstream = net.connect(socketPath);
    client.pipe(upstream).pipe(client);
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.unref();
      resolve(server);
    });
  });
}

/** https.Agents made by user code (the AWS SDK makes its own) use the proxy too. */
function proxyUserAgents() {
  const Base = https.Agent;
  class ProxiedAgent extends Base {
    constructor(options = {}) {
      super(options && options.proxyEnv === undefined ? { ...options, proxyEnv: process.env } : options);
    }
  }
  https.Agent = ProxiedAgent;
  syncBuiltinESMExports();
}

/** Loads undici (Request, Response, fetch) and node:http before any bundle, so a pre-started instance answers fast. */
async function warm() {
  const request = new Request('http://warm.invalid/', { method: 'POST', body: 'x', headers: { a: 'b' }, duplex: 'half' });
  await request.text();
  const response = new Response(new ReadableStream({ start: (c) => (c.enqueue(new Uint8Array([1])), c.close()) }), {
    headers: { 'set-cookie': 'a=b' },
  });
  response.headers.getSetCookie();
  await response.arrayBuffer();
  void fetch;
  void http.STATUS_CODES;
}

export async function setUpProcess() {
  const socket = process.env.SLIPWAY_EGRESS_SOCKET;
  if (socket) {
    await startEgressBridge(socket, Number(process.env.SLIPWAY_EGRESS_PORT) || 3128);
    proxyUserAgents();
  }
  await warm();
}

/** The JSON-lines control channel on fd 3, when the host opened one. */
export function openControl(fd = 3) {
  let socket;
  try {
    socket = new net.Socket({ fd, readable: true, writable: true });
  } catch {
    return null;
  }
  let buffered = '';
  const listeners = [];
  socket.setEncoding('utf8');
  socket.on('data', (text) => {
    buffered += text;
    let newline;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const line = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (!line.trim()) continue;
      let message;
      try {
        message = JSON.parse(line);
      } catch {
        continue;
      }
      for (const listener of listeners) listener(message);
    }
  });
  // The host went away: so does the instance.
  socket.on('end', () => process.exit(0));
  socket.on('error', () => process.exit(0));
  return {
    send: (message) => socket.write(`${JSON.stringify(message)}\n`),
    // The line is written out before the process goes (a socket's writes are asynchronous).
    sendAndExit: (message) => socket.end(`${JSON.stringify(message)}\n`, () => process.exit(0)),
    onMessage: (listener) => listeners.push(listener),
  };
}
