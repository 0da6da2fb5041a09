import { useEffect, useState } from 'preact/hooks';
import { navigate } from '../router.tsx';
import { api, loadSession } from '../session.ts';
import { ErrorNote, Field, Loading, Notice, Page, useAction } from '../ui.tsx';

/** The link's token travels in the fragment (#token=...), which no server ever sees. */
function tokenInFragment(): string | null {
  const match = /^#token=([A-Za-z0-9_-]+)$/.exec(location.hash);
  return match ? match[1]! : null;
}

function UseLink(props: { token: string }) {
  const action = useAction();
  useEffect(() => {
    void action.run(async () => {
      await api.post('/auth/sign-in', { token: props.token }, { team: null });
      history.replaceState(null, '', '/sign-in');
      await loadSession();
      navigate('/', { replace: true });
    });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [props.token]);
  return (
    <Page title="Signing in">
      {action.busy && <Loading what="your session" />}
      <ErrorNote error={action.error} />
      {action.error && (
        <p>
          <a href="/sign-in">Ask for a new link</a>
        </p>
      )}
    </Page>
  );
}

export function SignInPage() {
  const token = tokenInFragment();
  const [email, setEmail] = useState('');
  const [sentTo, setSentTo] = useState<string | null>(null);
  const action = useAction();
  if (token) return <UseLink token={token} />;
  const local = location.hostname.endsWith('.localhost') || location.hostname === 'localhost';
  return (
    <Page title="Sign in">
      <p>We send you a link by e-mail. It works once, for 15 minutes. A first sign-in creates your account and a personal team.</p>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          const done = await action.run(() => api.post('/auth/sign-in-link', { email }, { team: null }));
          if (done) setSentTo(email);
        }}
      >
        <Field
          label="E-mail address"
          name="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          error={action.fields.email}
          onInput={(e) => setEmail((e.target as HTMLInputElement).value)}
        />
        <ErrorNote error={action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Sending…' : 'Send me a sign-in link'}
        </button>
      </form>
      {sentTo && (
        <Notice>
          A sign-in link is on its way to {sentTo}. Open it in this browser.
          {local && (
            <>
              {' '}
              On the local platform no mail leaves the machine: the link is printed in the platform's log and listed in the{' '}
              <a href="/_local/outbox">local outbox</a>.
            </>
          )}
        </Notice>
      )}
    </Page>
  );
}
