import { batchGetAll } from '../db/batch.ts';
import { keys } from '../db/keys.ts';
import type { User } from '../users/user-records.ts';
import { listMembershipsOfUser } from '../teams/membership-records.ts';
import type { Team } from '../teams/teams.ts';
import {
  invitationStatus,
  listCredentialCutoffs,
  listEmailChanges,
  listFeedbackOfUser,
  listInvitationsForEmail,
  listStepUpGrants,
  type EmailChange,
} from './records.ts';
import type { TeamItem } from '../teams/records.ts';

/** Bumped whenever a section or field of the export changes shape. */
export const EXPORT_VERSION = '1';

/** What the export is and is not, for the person reading the file (the spec's `readme` keys). */
export const EXPORT_README = {
  about:
    'This file holds every record Slipway keeps that identifies you, across all the teams you belong to, as of generated_at. ' +
    'Timestamps are ISO 8601 in UTC. export_version changes when the layout of this file changes.',
  included:
    'profile (your account), team_memberships (each team you belong to and your role there), invitations (invitations sent to your ' +
    'e-mail address, with their status), feedback (messages you sent from the dashboard), email_changes (requests to change your ' +
    'account address, with the address and browser they came from), credential_cutoffs (instants before which your sessions and ' +
    'keys are no longer accepted, and why) and step_up_grants (recent re-authentications and the factors used).',
  not_included:
    'Team assets are not personal data of one member and are not in this file: projects, deployments, uploaded files, domains, ' +
    'environment variables, functions and their invocations, forms and their submissions. Ask a team owner to export those. ' +
    'Secrets are not included either: sessions, API keys and confirmation links are stored only as one-way hashes and cannot be shown. ' +
    'Also left out is bookkeeping that says nothing new about you: when you last marked notices as seen, which notices you ' +
    'dismissed in which team, and the hourly counters that limit confirmation e-mails.',
  retained:
    'Account and membership records are kept while your account exists. Invitations, e-mail change requests and step-up grants ' +
    'are removed automatically after they expire. Rate-limit counters that hold IP addresses expire two hours after their hour ' +
    'begins and are then deleted by the database. ' +
    'Feedback is kept until you ask for it to be deleted or your account is deleted.',
  deletion:
    'You can ask for your account to be deleted. Your profile, memberships, feedback and the other records above are then erased; ' +
    'a team you own must first be transferred to another member or deleted. Backups roll over within 35 days.',
  processors:
    'Slipway runs on Amazon Web Services (data storage, e-mail delivery through Amazon SES). No other party receives the ' +
    'records in this file.',
  privacy_policy: 'The privacy policy of this Slipway installation describes the legal basis and your rights; ask its operator for it.',
  questions:
    'For questions about this export or to exercise your rights (access, correction, deletion, objection), contact the operator ' +
    'of this Slipway installation.',
} as const;

async function teamsById(ids: string[]): Promise<Map<string, Team>> {
  const items = await batchGetAll<TeamItem>([...new Set(ids)].map((id) => keys.team(id)));
  return new Map(items.map((item) => [item.id, item]));
}

function emailChangeStatus(change: EmailChange, now: Date) {
  if (change.status === 'pending' && Date.parse(change.expires_at) <= now.getTime()) return 'expired';
  return change.status;
}

/** Every record that identifies the user, across all their teams; team assets excluded. */
export async function exportPersonalData(user: User) {
  const now = new Date();
  const [memberships, invitations, feedback, emailChanges, cutoffs, grants] = await Promise.all([
    listMembershipsOfUser(user.user_id),
    listInvitationsForEmail(user.email),
    listFeedbackOfUser(user.user_id),
    listEmailChanges(user.user_id),
    listCredentialCutoffs(user.user_id),
    listStepUpGrants(user.user_id),
  ]);
  const teams = await teamsById([
    ...memberships.map((m) => m.team_id),
    ...invitations.map((i) => i.team_id),
    ...feedback.map((f) => f.team_id),
  ]);
  const teamName = (id: string) => teams.get(id)?.name ?? null;

  return {
    export_version: EXPORT_VERSION,
    generated_at: now.toISOString(),
    profile: {
      email: user.email,
      email_verified: user.email_verified,
      given_name: (user as User & { given_name?: string | null }).given_name ?? null,
      name: user.name,
      source: user.source,
      user_id: user.user_id,
    },
    team_memberships: memberships.map((m) => ({
      created_at: m.created_at,
      display_name: user.name,
      email: user.email,
      joined_at: m.joined_at,
      role: m.role,
      team_id: m.team_id,
      team_name: teamName(m.team_id),
      team_slug: teams.get(m.team_id)?.slug ?? null,
    })),
    invitations: invitations.map((i) => ({
      accepted_at: i.accepted_at,
      created_at: i.created_at,
      email: i.email,
      expires_at: i.expires_at,
      role: i.role,
      status: invitationStatus(i, now),
      team_id: i.team_id,
      team_name: teamName(i.team_id),
    })),
    feedback: feedback.map((f) => ({
      app_version: f.app_version,
      created_at: f.created_at,
      id: f.id,
      message: f.message,
      page_route: f.page_route,
      team_id: f.team_id,
      team_name: teamName(f.team_id),
      type: f.type,
      user_agent: f.user_agent,
      user_email: f.user_email,
      viewport: f.viewport,
    })),
    email_changes: emailChanges.map((c) => ({
      attempts: c.attempts,
      confirmed_at: c.confirmed_at,
      created_at: c.created_at,
      expires_at: c.expires_at,
      freeze_link_expires_at: c.freeze_link_expires_at,
      frozen_at: c.frozen_at,
      new_email: c.new_email,
      old_email: c.old_email,
      request_ip: c.request_ip,
      request_user_agent: c.request_user_agent,
      status: emailChangeStatus(c, now),
    })),
    credential_cutoffs: cutoffs.map((c) => ({ not_before: c.not_before, reason: c.reason, updated_at: c.updated_at })),
    step_up_grants: grants.map((g) => ({ created_at: g.created_at, expires_at: g.expires_at, factors: g.factors })),
    readme: { ...EXPORT_README },
  };
}
