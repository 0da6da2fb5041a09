import * as z from '../../../lib/schema.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { CROSS_SITE_REQUEST_REFUSED } from '../../../lib/errors/catalogue/request.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';
import { isCrossSiteWrite, sessionCookie } from '../../../lib/identity/session-cookie.ts';
import { signInWithLink } from '../../../lib/identity/sign-in.ts';
import { meView } from '../../../lib/identity/me.ts';

const body = z.strictObject({ token: z.string().check(z.minLength(1), z.maxLength(512)) });

export const handler = defineHandler('POST /api/v1/auth/sign-in', { body }, async ({ body, headers, event }) => {
  // A browser elsewhere must not sign the person in as someone else (login CSRF); a client without Origin is no browser page.
  if (headers.origin && isCrossSiteWrite(event.requestContext.http.method, headers)) throw new ApiError(CROSS_SITE_REQUEST_REFUSED);
  const { user, sessionToken } = await signInWithLink(body.token);
  return { data: meView(user), headers: { 'Set-Cookie': sessionCookie(sessionToken) } };
});
