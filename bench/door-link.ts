import { bareServer, floorPair, load, LOAD_CONCURRENCY, LOAD_ROUNDS, LOAD_SECONDS, median } from './functions.ts';
import { http2Pair, linkCostMicros } from './http2-pair.ts';

/** `npm run bench -- door-link`: the two links alone, interleaved rounds, with the bare server as the baseline. */
export async function runDoorLinkBench(): Promise<void> {
  const bare = await bareServer();
  const framing = await floorPair();
  const h2 = await http2Pair();
  try {
    const runs = { bare: [] as number[], framing: [] as number[], http2: [] as number[] };
    for (let round = 0; round < LOAD_ROUNDS; round++) {
      runs.bare.push(await load(bare.port, 'bare'));
      runs.framing.push(await load(framing.port, 'floor'));
      runs.http2.push(await load(h2.port, 'floor'));
    }
    const [bareRps, framingRps, http2Rps] = [median(runs.bare), median(runs.framing), median(runs.http2)];
    console.log(
      `door-link (${LOAD_CONCURRENCY} connections, median of ${LOAD_ROUNDS} rounds of ${LOAD_SECONDS} s each): ` +
        `our framing ${framingRps.toFixed(0)} req/s, node:http2 ${http2Rps.toFixed(0)} req/s (bare node:http ${bareRps.toFixed(0)} req/s); ` +
        `HTTP/2 costs ${linkCostMicros(framingRps, http2Rps).toFixed(0)} µs more per request (${((framingRps / http2Rps - 1) * 100).toFixed(1)}% of our framing's time)`,
    );
  } finally {
    bare.stop();
    framing.stop();
    h2.stop();
  }
}
