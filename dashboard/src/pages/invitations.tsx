import { navigate } from '../router.tsx';
import { api, chooseTeam, loadSession, useSession } from '../session.ts';
import { ErrorNote, formatTime, Loading, Page, useAction, useLoad } from '../ui.tsx';
import type { MyInvitation } from '../api-types.ts';

/** Invitations to the signed-in person's address; also what someone with no team yet sees. */
export function InvitationsPage() {
  const session = useSession();
  const list = useLoad(() => api.get<MyInvitation[]>('/me/invitations', { team: null }), []);
  const action = useAction();
  return (
    <Page title="Invitations">
      {!session.team && <p>You belong to no team yet. Accept an invitation, or ask a team's admin to invite {session.me?.email}.</p>}
      <ErrorNote error={action.error ?? list.error} />
      {!list.data && !list.error && <Loading what="invitations" />}
      {list.data?.length === 0 && <p>No pending invitations for {session.me?.email}.</p>}
      <ul>
        {list.data?.map((i) => (
          <li key={i.id}>
            {i.team_name ?? 'A team'} invites you as {i.role} (until {formatTime(i.expires_at)}){' '}
            <button
              type="button"
              disabled={action.busy}
              onClick={async () => {
                const ok = await action.run(() => api.post(`/me/invitations/${i.id}/accept`, {}, { team: null }));
                if (ok) {
                  await loadSession();
                  chooseTeam(i.team_id);
                  navigate('/');
                }
              }}
            >
              Join {i.team_name ?? 'the team'}
            </button>
          </li>
        ))}
      </ul>
    </Page>
  );
}
