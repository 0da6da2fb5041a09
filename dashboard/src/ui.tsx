import type { ComponentChildren, JSX } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError, describeError } from './api.ts';

/** Loads data for a view; `reload` runs it again. Errors become a sentence, never a blank page. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data: T | null; error: string | null; loading: boolean }>({
    data: null,
    error: null,
    loading: true,
  });
  const seq = useRef(0);
  const reload = useCallback(async () => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    try {
      const data = await load();
      if (mine === seq.current) setState({ data, error: null, loading: false });
    } catch (error) {
      if (mine === seq.current) setState((s) => ({ data: s.data, error: describeError(error), loading: false }));
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(() => {
    void reload();
  }, [reload]);
  return { ...state, reload };
}

/** A form's or button's action: busy while it runs, its error sentence and the sentences of each failing field. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [problem, setProblem] = useState<ApiError | null>(null);
  const run = useCallback(async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
    setBusy(true);
    setError(null);
    setFields({});
    setProblem(null);
    try {
      return await work();
    } catch (e) {
      setError(describeError(e));
      if (e instanceof ApiError) {
        setFields(e.fields);
        setProblem(e);
      }
      return undefined;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, fields, problem, run, setError };
}

export function ErrorNote(props: { error: string | null | undefined }) {
  if (!props.error) return null;
  return (
    <p class="error" role="alert">
      {props.error}
    </p>
  );
}

export function Notice(props: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {props.children}
    </p>
  );
}

export function Loading(props: { what?: string }) {
  return (
    <p class="loading" role="status">
      Loading{props.what ? ` ${props.what}` : ''}…
    </p>
  );
}

export function Page(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${props.title} · Slipway`;
  }, [props.title]);
  return (
    <>
      <div class="page-head">
        <h1 id="page-title" tabIndex={-1}>
          {props.title}
        </h1>
        {props.actions}
      </div>
      {props.children}
    </>
  );
}

type InputProps = Omit<JSX.InputHTMLAttributes<HTMLInputElement>, 'label' | 'error'>;
type Notes = { error?: string; hint?: string };

/** The hint and error sentence under a control, and the ids that tie them to it for screen readers. */
function useNotes(notes: Notes) {
  const id = useId();
  const describedBy = [notes.error ? `${id}-error` : '', notes.hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  const aria = { 'aria-invalid': notes.error ? ('true' as const) : undefined, 'aria-describedby': describedBy };
  const below = (
    <>
      {notes.hint && (
        <small id={`${id}-hint`} class="hint">
          {notes.hint}
        </small>
      )}
      {notes.error && (
        <small id={`${id}-error`} class="field-error">
          {notes.error}
        </small>
      )}
    </>
  );
  return { id, aria, below };
}

/** A labelled input with its own error sentence. */
export function Field(props: InputProps & { label: string; name: string } & Notes) {
  const { label, error, hint, ...input } = props;
  const notes = useNotes({ error, hint });
  return (
    <div class="field">
      <label for={notes.id}>{label}</label>
      <input id={notes.id} {...input} {...notes.aria} />
      {notes.below}
    </div>
  );
}

export function TextArea(props: Omit<JSX.TextareaHTMLAttributes<HTMLTextAreaElement>, 'label'> & { label: string; name: string } & Notes) {
  const { label, error, hint, ...area } = props;
  const notes = useNotes({ error, hint });
  return (
    <div class="field">
      <label for={notes.id}>{label}</label>
      <textarea id={notes.id} {...area} {...notes.aria} />
      {notes.below}
    </div>
  );
}

export function Select(props: {
  label: string;
  name: string;
  value: string;
  options: readonly (string | [string, string])[];
  onChange: (value: string) => void;
  error?: string;
}) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        name={props.name}
        value={props.value}
        onChange={(e) => props.onChange((e.target as HTMLSelectElement).value)}
        aria-invalid={props.error ? 'true' : undefined}
      >
        {props.options.map((o) => {
          const [value, text] = typeof o === 'string' ? [o, o] : o;
          return (
            <option key={value} value={value}>
              {text}
            </option>
          );
        })}
      </select>
      {props.error && <small class="field-error">{props.error}</small>}
    </div>
  );
}

export function Checkbox(props: { label: string; name: string; checked: boolean; onChange: (checked: boolean) => void }) {
  const id = useId();
  return (
    <div class="field checkbox">
      <input
        id={id}
        type="checkbox"
        name={props.name}
        checked={props.checked}
        onChange={(e) => props.onChange((e.target as HTMLInputElement).checked)}
      />
      <label for={id}>{props.label}</label>
    </div>
  );
}

/** Copies text to the clipboard and says so. */
export function CopyButton(props: { text: string; label: string }) {
  const [said, setSaid] = useState('');
  return (
    <span class="copy">
      <button
        type="button"
        class="small"
        onClick={async () => {
          try {
            await navigator.clipboard.writeText(props.text);
            setSaid('Copied');
          } catch {
            setSaid('Copy failed: select the text and copy it');
          }
        }}
      >
        {props.label}
      </button>
      <span role="status" class="copy-status">
        {said}
      </span>
    </span>
  );
}

export function Progress(props: { label: string; value: number; max: number }) {
  const id = useId();
  return (
    <div class="progress" role="status">
      <label for={id}>{props.label}</label>
      <progress id={id} value={props.value} max={props.max || 1} />
    </div>
  );
}

export const formatTime = (iso: string | null | undefined) => (iso ? new Date(iso).toLocaleString() : '—');
export const formatBytes = (n: number) =>
  n < 1024 ? `${n} B` : n < 1048576 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1048576).toFixed(1)} MB`;
export const shortId = (id: string | null | undefined) => (id ? id.slice(0, 8) : '—');

/** Re-runs `tick` every `ms` while `active`, for state that changes on the platform's side. */
export function useInterval(tick: () => void, ms: number, active: boolean) {
  useEffect(() => {
    if (!active) return undefined;
    const timer = setInterval(tick, ms);
    return () => clearInterval(timer);
  }, [tick, ms, active]);
}
