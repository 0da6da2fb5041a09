import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routes } from '../../lib/http/routes.ts';
import { makeTeamWithRoles, startTestPlatform, type TestPlatform } from '../support/platform.ts';

/**
 * Bad input gets an error envelope with a 4xx, never a 500: every route of
 * the table, called as the team's owner with nonsense parameters and bodies.
 */
let platform: TestPlatform;
let m: Awaited<ReturnType<typeof makeTeamWithRoles>>;

beforeAll(async () => {
  platform = await startTestPlatform();
  m = await makeTeamWithRoles();
});
afterAll(() => platform?.stop());

const parameterValues = ['x', '00000000-0000-4000-8000-000000000000', '%2e%2e', 'a'.repeat(300), '%00'];
const bodies: { name: string; rawBody: string; type: string }[] = [
  { name: 'malformed JSON', rawBody: '{"a":', type: 'application/json' },
  { name: 'an array', rawBody: '[1,2,3]', type: 'application/json' },
  { name: 'a string', rawBody: '"text"', type: 'application/json' },
  { name: 'null', rawBody: 'null', type: 'application/json' },
  {
    name: 'wrong types',
    rawBody: JSON.stringify({
      files: 'x',
      project: 5,
      seen_at: {},
      issuer: [],
      content: 1,
      deployment_id: false,
      new_owner_id: 7,
      token: null,
      name: [],
      slug: {},
    }),
    type: 'application/json',
  },
  { name: 'form data', rawBody: 'a=1&b=2', type: 'application/x-www-form-urlencoded' },
  { name: 'binary', rawBody: '\u0000\u0001\u0002', type: 'application/octet-stream' },
];

describe.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))('%s', (_key, row) => {
  it('answers garbage with a 4xx error envelope, never a 500', async () => {
    // Every combination at once: each is its own nonsense request, and none of them may change anything.
    const calls = parameterValues.flatMap((value) =>
      (row.method === 'GET' ? [undefined] : bodies).map((body) => ({
        path: row.path.replace(/\{[^}]+\}/g, value) + '?page=-1&page_size=abc&team_id=%ZZ&cursor=!!&limit=0',
        body,
      })),
    );
    const replies = await Promise.all(
      calls.map(({ path, body }) =>
        platform.api(row.method, path, {
          token: m.owner.token,
          ...(body ? { rawBody: body.rawBody, headers: { 'content-type': body.type } } : {}),
        }),
      ),
    );
    replies.forEach((reply, i) => {
      const { path, body } = calls[i]!;
      const what = `${row.method} ${path} with ${body?.name ?? 'no body'}: ${reply.status} ${reply.text.slice(0, 200)}`;
      expect(reply.status, what).toBeLessThan(500);
      if (reply.status >= 400) {
        expect(Object.keys(reply.body).sort(), what).toEqual(['code', 'details', 'error', 'meta']);
        expect(reply.text, what).not.toMatch(/\n\s+at |Error:/);
      }
    });
  });
});
