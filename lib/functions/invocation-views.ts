import type { ConsoleLine } from './host.ts';
import { loadPart, type StoredResult } from './invocation-payloads.ts';
import { type InvocationRecord, type InvocationStatus, type InvocationTrigger, recentInvocations } from './invocation-records.ts';
import { TERMINAL } from './invocations.ts';

/** What callers read of a queued invocation: the public poll, the members' view, a function's recent list. */

/** Spec "Invocation": the public poll's answer and the completion callback's body. */
export interface InvocationView {
  id: string;
  status: InvocationStatus;
  started_at: string | null;
  finished_at: string | null;
  /** Once the invocation ended: the function's answer. */
  response_status?: number;
  response_headers?: Record<string, string>;
  /** base64 */
  response_body?: string;
  error_message?: string;
}

/** The members' view: the public one, its function, trigger and times, console output and callback delivery. */
export interface MemberInvocationView extends InvocationView {
  function_name: string;
  trigger: InvocationTrigger;
  created_at: string;
  expires_at: string;
  console: ConsoleLine[];
  callback: {
    url: string;
    attempts: number;
    last_status: number | null;
    last_error: string | null;
    delivered_at: string | null;
  } | null;
}

/** A row of a function's recent invocations: no bodies. */
export type InvocationListRow = Pick<InvocationView, 'id' | 'status' | 'started_at' | 'finished_at' | 'response_status' | 'error_message'> &
  Pick<MemberInvocationView, 'trigger' | 'created_at'>;

/** The public poll view (spec "Invocation"): no console output, ever. */
export async function invocationView(record: InvocationRecord): Promise<InvocationView> {
  const view: InvocationView = {
    id: record.id,
    status: record.status,
    started_at: record.started_at ?? null,
    finished_at: record.finished_at ?? null,
  };
  if (TERMINAL.includes(record.status)) {
    const result = (await loadPart<StoredResult>(record, 'result')) ?? {
      status: record.response_status ?? 500,
      headers: {},
      body: '',
    };
    view.response_status = result.status;
    view.response_headers = result.headers;
    view.response_body = result.body;
    if (record.error_message) view.error_message = record.error_message;
  }
  return view;
}

/** The members' view: the invocation, its function and times, and its console output. */
export async function memberInvocationView(record: InvocationRecord): Promise<MemberInvocationView> {
  const console = TERMINAL.includes(record.status) ? ((await loadPart<ConsoleLine[]>(record, 'console')) ?? []) : [];
  return {
    ...(await invocationView(record)),
    function_name: record.function_name,
    trigger: record.trigger ?? 'queued',
    created_at: record.created_at,
    expires_at: record.expires_at,
    console,
    // The delivery of the caller's completion callback: never in the public poll.
    callback: record.callback_url
      ? {
          url: record.callback_url,
          attempts: record.callback_attempts ?? 0,
          last_status: record.callback_last_status ?? null,
          last_error: record.callback_last_error ?? null,
          delivered_at: record.callback_delivered_at ?? null,
        }
      : null,
  };
}

/** A function's invocations, newest first (at most `limit`), without result bodies. */
export async function listInvocations(projectId: string, name: string, limit = 50): Promise<InvocationListRow[]> {
  return (await recentInvocations(projectId, name, limit)).map((item) => ({
    id: item.id,
    status: item.status,
    trigger: item.trigger ?? 'queued',
    created_at: item.created_at,
    started_at: item.started_at ?? null,
    finished_at: item.finished_at ?? null,
    ...(item.response_status !== undefined && TERMINAL.includes(item.status) ? { response_status: item.response_status } : {}),
    ...(item.error_message ? { error_message: item.error_message } : {}),
  }));
}
