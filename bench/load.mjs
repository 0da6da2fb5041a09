// A bare HTTP load generator for bench/serving.ts, run in a process of its own so that it never shares an
// event loop with the server it measures: CONNECTIONS keep-alive connections, each sending its next request
// as soon as the last one's body ended, for SECONDS. Prints one JSON line of figures. Loopback only.
import { Agent, request } from 'node:http';

const [url, host, seconds, connections] = [process.argv[2], process.argv[3], Number(process.argv[4]), Number(process.argv[5])];
const target = new URL(url);
if (!['127.0.0.1', 'localhost', '::1'].includes(target.hostname)) throw new Error('loopback only');
const agent = new Agent({ keepAlive: true, maxSockets: connections });
const latencies = [];
let errors = 0;
const statuses = {};
const until = Date.now() + seconds * 1000;

function once() {
  return new Promise((resolve) => {
    const started = performance.now();
    const req = request({ host: target.hostname, port: target.port, path: target.pathname, agent, headers: { host } }, (res) => {
      statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
      res.on('data', () => {});
      res.on('end', () => {
        latencies.push(performance.now() - started);
        resolve();
      });
    });
    req.on('error', () => {
      errors++;
      resolve();
    });
    req.end();
  });
}

async function loop() {
  while (Date.now() < until) await once();
}

const began = performance.now();
await Promise.all(Array.from({ length: connections }, loop));
const elapsed = (performance.now() - began) / 1000;
latencies.sort((a, b) => a - b);
const at = (q) => (latencies.length ? latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] : NaN);
const figures = { requests: latencies.length, rps: latencies.length / elapsed, p50_ms: at(0.5), p99_ms: at(0.99), errors, statuses };
process.stdout.write(`${JSON.stringify(figures)}\n`);
agent.destroy();
