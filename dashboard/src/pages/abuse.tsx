import { useState } from 'preact/hooks';
import { api } from '../session.ts';
import { Checkbox, ErrorNote, Field, Notice, Page, Select, TextArea, useAction } from '../ui.tsx';

const CATEGORIES: [string, string][] = [
  ['phishing', 'Phishing'],
  ['malware', 'Malware'],
  ['fraud', 'Fraud or scam'],
  ['child_sexual_abuse', 'Child sexual abuse material'],
  ['terrorist_content', 'Terrorist content'],
  ['illegal_hate_speech', 'Illegal hate speech'],
  ['non_consensual_intimate_imagery', 'Non-consensual intimate imagery'],
  ['intellectual_property', 'Intellectual property infringement'],
  ['privacy_violation', 'Privacy violation'],
  ['illegal_goods_or_services', 'Illegal goods or services'],
  ['spam', 'Spam'],
  ['other_illegal_content', 'Other illegal content'],
];

interface ReportForm {
  category: string;
  urls: string;
  description: string;
  name: string;
  email: string;
  goodFaith: boolean;
  hp: string;
}

/** The report as the API takes it (POST /public/abuse-reports). */
function reportBody(form: ReportForm) {
  return {
    _hp: form.hp,
    category: form.category,
    description: form.description,
    reported_urls: form.urls.split(/\s+/).filter(Boolean),
    reporter_name: form.name || null,
    reporter_email: form.email || null,
    good_faith_declared: form.goodFaith,
  };
}

/** Who reports: name, address, the honeypot and the good-faith declaration. */
function ReporterFields({
  form,
  set,
  fields,
}: {
  form: ReportForm;
  set: (key: keyof ReportForm) => (value: string | boolean) => void;
  fields: Record<string, string>;
}) {
  return (
    <>
      <Field
        label="Your name"
        name="reporter_name"
        value={form.name}
        error={fields.reporter_name}
        hint="Required, except for reports of child sexual abuse material."
        onInput={(e) => set('name')((e.target as HTMLInputElement).value)}
      />
      <Field
        label="Your e-mail address"
        name="reporter_email"
        type="email"
        value={form.email}
        error={fields.reporter_email}
        hint="We send the confirmation of receipt there."
        onInput={(e) => set('email')((e.target as HTMLInputElement).value)}
      />
      {/* A honeypot: people never see it, form-filling bots do. */}
      <div style={{ display: 'none' }}>
        <label>
          Leave this empty{' '}
          <input
            name="_hp"
            tabIndex={-1}
            autoComplete="off"
            value={form.hp}
            onInput={(e) => set('hp')((e.target as HTMLInputElement).value)}
          />
        </label>
      </div>
      <Checkbox
        label="I declare that this report is accurate and made in good faith"
        name="good_faith_declared"
        checked={form.goodFaith}
        onChange={set('goodFaith')}
      />
    </>
  );
}

/** The public notice-and-action form (DSA Article 16): usable without an account. */
export function AbuseReportPage() {
  const [form, setForm] = useState<ReportForm>({
    category: 'phishing',
    urls: '',
    description: '',
    name: '',
    email: '',
    goodFaith: false,
    hp: '',
  });
  const [receipt, setReceipt] = useState<string | null>(null);
  const action = useAction();
  const set = (key: keyof typeof form) => (value: string | boolean) => setForm({ ...form, [key]: value });
  // Addresses the platform does not serve come back as details.urls: named next to the field they came from.
  const notHosted =
    action.problem?.code === 'ABUSE_REPORT_URL_NOT_HOSTED' ? ((action.problem.details as { urls?: string[] } | null)?.urls ?? []) : [];
  const urlError = notHosted.length
    ? `Not on a site or function this platform hosts: ${notHosted.join(', ')}.`
    : Object.entries(action.fields).find(([k]) => k.startsWith('reported_urls'))?.[1];
  if (receipt) {
    return (
      <Page title="Report received">
        <Notice>Thank you. Your report is recorded with the reference {receipt}. Keep it if you contact us about it.</Notice>
      </Page>
    );
  }
  return (
    <Page title="Report abuse">
      <p>Tell us about content on a site or function this platform hosts. You need no account.</p>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          const body = reportBody(form);
          const done = await action.run(() => api.post<{ id: string }>('/public/abuse-reports', body, { team: null }));
          if (done) setReceipt(done.id);
        }}
      >
        <Select
          label="What is it"
          name="category"
          value={form.category}
          options={CATEGORIES}
          onChange={set('category')}
          error={action.fields.category}
        />
        <TextArea
          label="Addresses of the content (one per line)"
          name="reported_urls"
          rows={3}
          required
          value={form.urls}
          error={urlError}
          onInput={(e) => set('urls')((e.target as HTMLTextAreaElement).value)}
        />
        <TextArea
          label="Why it is illegal or against the rules"
          name="description"
          rows={5}
          required
          value={form.description}
          error={action.fields.description}
          onInput={(e) => set('description')((e.target as HTMLTextAreaElement).value)}
        />
        <ReporterFields form={form} set={set} fields={action.fields} />
        {action.fields.good_faith_declared && <p class="field-error">{action.fields.good_faith_declared}</p>}
        <ErrorNote error={notHosted.length ? 'Check the addresses: the report names a page this platform does not host.' : action.error} />
        <button type="submit" disabled={action.busy}>
          {action.busy ? 'Sending…' : 'Send the report'}
        </button>
      </form>
    </Page>
  );
}
