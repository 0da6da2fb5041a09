import { defineHandler } from '../../../lib/http/pipeline.ts';
import { revokeCredentialByHash } from '../../../lib/identity/credential-records.ts';
import { clearedSessionCookie } from '../../../lib/identity/session-cookie.ts';

// Revokes the session that made the request (cookie or bearer), so the token is dead wherever it was copied to.
export const handler = defineHandler('POST /api/v1/auth/sign-out', {}, async ({ principal }) => {
  await revokeCredentialByHash(principal!.tokenHash);
  return { data: { status: 'signed_out' }, headers: { 'Set-Cookie': clearedSessionCookie() } };
});
