import { describe, expect, it } from 'vitest';
import type { QueuedOutcome } from '../../lib/functions/host.ts';
import { boundConsole, INVOCATION_ERRORS, joinHeaders, MAX_CONSOLE_LINES } from '../../lib/functions/invocations.ts';
import { finishOf } from '../../lib/functions/queued.ts';

/** How each way a queued run ends maps to the invocation's status, sentence and result fields. */
describe('queued outcomes', () => {
  const reply = {
    status: 201,
    headers: [
      ['set-cookie', 'a=1'],
      ['set-cookie', 'b=2'],
      ['content-type', 'text/plain'],
    ] as [string, string][],
    body: Buffer.from('ok'),
  };
  const of = (outcome: QueuedOutcome, withReply = false) =>
    finishOf({ outcome, reply: withReply ? reply : null, console: [], runtimeMs: 5 });

  it('maps every outcome to its spec sentence', () => {
    expect(of('response', true)).toMatchObject({
      status: 'completed',
      result: { status: 201, headers: { 'set-cookie': 'a=1, b=2', 'content-type': 'text/plain' }, body: 'b2s=' },
    });
    expect(of('response', true).error_message).toBeUndefined();
    expect(of('handler_error', true)).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.handlerError,
      result: { status: 201 },
    });
    expect(of('crashed')).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.handlerError,
      result: { status: 500, body: '' },
    });
    expect(of('invalid_response')).toMatchObject({
      status: 'failed',
      error_message: INVOCATION_ERRORS.invalidResponse,
      result: { status: 500 },
    });
    expect(of('out_of_memory')).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.outOfMemory });
    expect(of('timed_out')).toMatchObject({ status: 'timed_out', error_message: INVOCATION_ERRORS.timedOut, result: { status: 504 } });
    expect(of('start_failed')).toMatchObject({ status: 'failed', error_message: INVOCATION_ERRORS.couldNotRun });
  });

  it('the sentences are the spec literals', () => {
    expect(Object.values(INVOCATION_ERRORS)).toEqual([
      'The function did not finish within its timeout of 60s.',
      'The function ran out of memory.',
      'The function returned an error. Check the invocation logs.',
      'The function did not return a valid response.',
      'This function is not deployed. Redeploy the project and try again.',
      'The function could not be run. This is a platform issue; please retry.',
      'The function did not finish before its timeout.',
      'The function was never started. This is a platform issue; please retry.',
    ]);
  });

  it('joins repeated headers into one and bounds the console kept', () => {
    expect(
      joinHeaders([
        ['Set-Cookie', 'x=1'],
        ['set-cookie', 'y=2'],
      ]),
    ).toEqual({ 'set-cookie': 'x=1, y=2' });
    const lines = Array.from({ length: MAX_CONSOLE_LINES + 50 }, (_, i) => ({ at: 't', stream: 'stdout' as const, line: `l${i}` }));
    const kept = boundConsole(lines);
    expect(kept.length).toBe(MAX_CONSOLE_LINES + 1);
    expect(kept.at(-1)!.line).toBe('[platform] 50 more console lines were not kept');
  });
});
