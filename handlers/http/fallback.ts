import { access } from '../../lib/access/rules.ts';
import { ApiError } from '../../lib/errors/api-error.ts';
import { METHOD_NOT_ALLOWED, ROUTE_NOT_FOUND } from '../../lib/errors/catalogue/request.ts';
import { buildHandler } from '../../lib/http/pipeline.ts';
import { allowedMethods } from '../../lib/http/routes.ts';

/** API Gateway's `$default` route: requests no route row matches get the error envelope. */
export const handler = buildHandler('$default', access.public(), {}, async ({ event }) => {
  const allowed = allowedMethods(event.rawPath);
  if (allowed.length > 0) {
    throw new ApiError(METHOD_NOT_ALLOWED, {
      details: { allowed_methods: allowed },
      headers: { allow: allowed.join(', ') },
    });
  }
  throw new ApiError(ROUTE_NOT_FOUND, { details: { path: event.rawPath } });
});
