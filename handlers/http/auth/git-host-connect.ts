import { loadSecrets } from '../../../lib/aws/secrets.ts';
import { config } from '../../../lib/config.ts';
import { createConnectState, installUrlWithState } from '../../../lib/git/connect-state.ts';
import { ApiError } from '../../../lib/errors/api-error.ts';
import { TEAM_ID_INVALID } from '../../../lib/errors/catalogue/accounts.ts';
import { defineHandler } from '../../../lib/http/pipeline.ts';

// Signs the connect state: the key comes from Secrets Manager on cold start, before the first request.
await loadSecrets(['gitState']);

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const handler = defineHandler('GET /api/v1/auth/git-host/connect', {}, async ({ event, principal, authorizeTeam }) => {
  // Read by hand rather than by schema so that a missing or malformed team_id has its own stable code.
  const teamId = event.queryStringParameters?.team_id;
  if (!teamId || !UUID.test(teamId)) throw new ApiError(TEAM_ID_INVALID);
  const { team } = await authorizeTeam(teamId);
  const { state, verifier, expiresAt } = createConnectState({ teamId: team.id, userId: principal!.user!.user_id, now: new Date() });
  return {
    data: {
      install_url: installUrlWithState(config.gitAppInstallUrl(), state),
      state,
      expires_at: expiresAt.toISOString(),
      // Only the caller holds it; the callback proves possession against the challenge signed into the state.
      verifier,
    },
    headers: { 'cache-control': 'no-store' },
  };
});
