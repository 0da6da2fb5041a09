import { useEffect, useState } from 'preact/hooks';
import { api, useSession } from '../session.ts';
import { ErrorNote, formatTime, Loading, Notice, Page, Select, TextArea, useAction, useLoad } from '../ui.tsx';
import type { Notices } from '../api-types.ts';

/** Tells the header how many notices are unread; asked again when notices change. */
const noticeListeners = new Set<() => void>();
const noticesChanged = () => {
  for (const listener of noticeListeners) listener();
};

export function useUnreadNotices(teamId: string | null): number {
  const [count, setCount] = useState(0);
  useEffect(() => {
    if (!teamId) return undefined;
    const read = () =>
      void api.get<Notices>('/notices').then(
        (n) => setCount(n.unread_count),
        () => setCount(0),
      );
    read();
    noticeListeners.add(read);
    return () => void noticeListeners.delete(read);
  }, [teamId]);
  return count;
}

function EmailConfirmation() {
  const session = useSession();
  const [status, setStatus] = useState<string | null>(null);
  const action = useAction();
  if (session.me?.email_verified) return <p>Your address {session.me.email} is confirmed.</p>;
  return (
    <>
      <p>Your address {session.me?.email} is not confirmed yet.</p>
      <ErrorNote error={action.error} />
      {status && <Notice>{status === 'sent' ? 'A new confirmation link is on its way.' : 'Your address is already confirmed.'}</Notice>}
      <button
        type="button"
        disabled={action.busy}
        onClick={async () => {
          const r = await action.run(() => api.post<{ status: string }>('/me/email-verification/resend', undefined, { team: null }));
          if (r) setStatus(r.status);
        }}
      >
        Send a new confirmation link
      </button>
    </>
  );
}

function Export() {
  const action = useAction();
  return (
    <>
      <p>Every record that identifies you, across your teams, as one JSON file.</p>
      <ErrorNote error={action.error} />
      <button
        type="button"
        disabled={action.busy}
        onClick={() =>
          action.run(async () => {
            const data = await api.get('/me/export', { team: null });
            const url = URL.createObjectURL(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }));
            const a = Object.assign(document.createElement('a'), { href: url, download: 'slipway-personal-data.json' });
            a.click();
            URL.revokeObjectURL(url);
          })
        }
      >
        {action.busy ? 'Preparing…' : 'Download my data'}
      </button>
    </>
  );
}

function NoticeList() {
  const list = useLoad(() => api.get<Notices>('/notices'), []);
  const action = useAction();
  const after = async () => {
    await list.reload();
    noticesChanged();
  };
  return (
    <>
      <ErrorNote error={action.error ?? list.error} />
      {!list.data && !list.error && <Loading what="notices" />}
      {list.data && (
        <>
          <p>{list.data.unread_count} unread.</p>
          {list.data.unread_count > 0 && (
            <button
              type="button"
              disabled={action.busy}
              onClick={() =>
                action.run(async () => {
                  await api.post('/notices/seen', { seen_at: new Date().toISOString() }, { team: null });
                  await after();
                })
              }
            >
              Mark all as seen
            </button>
          )}
          <ul>
            {list.data.notices.map((n) => (
              <li key={n.key}>
                <strong>{n.title}</strong>
                {n.unread ? ' (new)' : ''} · {formatTime(n.published_at)}
                {n.body && <p>{n.body}</p>}
                <button
                  type="button"
                  class="small"
                  disabled={action.busy}
                  onClick={() =>
                    action.run(async () => {
                      await api.post(`/notices/${encodeURIComponent(n.key)}/dismiss`, {});
                      await after();
                    })
                  }
                >
                  Dismiss {n.title}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
    </>
  );
}

function Feedback() {
  const [message, setMessage] = useState('');
  const [type, setType] = useState('general');
  const [sent, setSent] = useState(false);
  const action = useAction();
  return (
    <form
      onSubmit={async (e) => {
        e.preventDefault();
        setSent(false);
        const body = { message, type, page_route: location.pathname, viewport: `${innerWidth}x${innerHeight}` };
        if (await action.run(() => api.post('/feedback', body))) {
          setSent(true);
          setMessage('');
        }
      }}
    >
      <Select
        label="Kind"
        name="type"
        value={type}
        onChange={setType}
        options={[
          ['general', 'General'],
          ['bug', 'Something is broken'],
          ['idea', 'An idea'],
          ['question', 'A question'],
        ]}
      />
      <TextArea
        label="Your feedback"
        name="message"
        rows={4}
        value={message}
        required
        error={action.fields.message}
        onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)}
      />
      <ErrorNote error={action.error} />
      {sent && <Notice>Thank you: the team behind the platform reads every message.</Notice>}
      <button type="submit" disabled={action.busy}>
        Send feedback
      </button>
    </form>
  );
}

export function AccountPage() {
  return (
    <Page title="Account">
      <section aria-labelledby="email-title">
        <h2 id="email-title">E-mail address</h2>
        <EmailConfirmation />
      </section>
      <section aria-labelledby="export-title">
        <h2 id="export-title">Your data</h2>
        <Export />
      </section>
      <section aria-labelledby="notices-title">
        <h2 id="notices-title">Notices</h2>
        <NoticeList />
      </section>
      <section aria-labelledby="feedback-title">
        <h2 id="feedback-title">Feedback</h2>
        <Feedback />
      </section>
    </Page>
  );
}

/** The page a confirmation mail links to: `/confirm-email?token=...`. */
export function ConfirmEmailPage() {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const action = useAction();
  const [email, setEmail] = useState<string | null>(null);
  useEffect(() => {
    void action.run(async () =>
      setEmail((await api.post<{ email: string }>('/email-verification/confirm', { token }, { team: null })).email),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [token]);
  return (
    <Page title="Confirm your e-mail address">
      {action.busy && <Loading what="the confirmation" />}
      <ErrorNote error={action.error} />
      {email && (
        <Notice>
          {email} is confirmed. <a href="/">Go to the console</a>.
        </Notice>
      )}
    </Page>
  );
}
