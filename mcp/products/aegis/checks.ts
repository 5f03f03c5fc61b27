/**
 * The posture checks of an aegis scan: pure functions over a snapshot of the tenant's own Portico
 * set-up (its connections and its members), so that what a scan finds is exactly what the data says.
 */
import { DAY_MS } from '../common.js';

export const SEVERITIES = ['critical', 'high', 'medium', 'low', 'info'] as const;
export type Severity = (typeof SEVERITIES)[number];
export const SEVERITY_RANK: Record<Severity, number> = { critical: 4, high: 3, medium: 2, low: 1, info: 0 };

/** Thresholds, named so that descriptions and findings quote the same numbers. */
export const STALE_CONNECTION_DAYS = 30;
export const INACTIVE_ADMIN_DAYS = 30;
export const INACTIVE_MEMBER_DAYS = 90;
export const CONNECTION_SPRAWL = 10;
export const RECENT_REVOCATION_DAYS = 7;

export interface ConnectionSnapshot {
  id: string;
  user_id: string;
  client_id: string;
  client_name: string | null;
  client_kind: string;
  product: string;
  scopes: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface MemberSnapshot {
  user_id: string;
  email: string;
  role: 'admin' | 'member';
  joined_at: number;
  last_login_at: number | null;
  /** The account is disabled (`user disable`): it signs nobody in, so its role counts for nothing. */
  disabled: boolean;
}

interface FindingDraft {
  check: string;
  severity: Severity;
  title: string;
  detail: string;
  recommendation: string;
  subject_kind: 'connection' | 'user' | 'organization';
  subject_id: string;
  subject_label: string;
}

export interface CheckResult {
  checks_run: number;
  subjects_examined: number;
  findings: FindingDraft[];
}

const days = (ms: number) => Math.floor(ms / DAY_MS);
const clientLabel = (c: ConnectionSnapshot) => `${c.client_name ?? c.client_id} → ${c.product}`;
const writeScopes = (c: ConnectionSnapshot) => c.scopes.split(' ').filter((s) => s.endsWith('.write'));

type Check = (input: { connections: ConnectionSnapshot[]; members: MemberSnapshot[]; now: number }) => FindingDraft[];

const CHECKS: Record<string, Check> = {
  /** A live grant for someone who is no longer in the organization keeps their access alive. */
  orphaned_connection: ({ connections, members }) => {
    const memberIds = new Set(members.map((m) => m.user_id));
    return connections
      .filter((c) => c.revoked_at === null && !memberIds.has(c.user_id))
      .map((c) => ({
        check: 'orphaned_connection', severity: 'critical', subject_kind: 'connection', subject_id: c.id, subject_label: clientLabel(c),
        title: 'Active connection of a person who is no longer a member',
        detail: `Connection ${c.id} (${clientLabel(c)}, scopes: ${c.scopes}) belongs to user ${c.user_id}, who is not a member of this organization any more.`,
        recommendation: 'Revoke the connection on the Connections page of the console.',
      }));
  },

  /** Admins who can act: a disabled account's role is no cover. */
  admin_coverage: ({ members }) => {
    const admins = members.filter((m) => m.role === 'admin' && !m.disabled);
    const disabled = members.filter((m) => m.role === 'admin' && m.disabled).length;
    const besides = disabled ? ` (${disabled} admin account${disabled === 1 ? ' is' : 's are'} disabled)` : '';
    if (admins.length >= 2) return [];
    if (admins.length === 0) {
      return [{
        check: 'admin_coverage', severity: 'critical', subject_kind: 'organization', subject_id: 'organization', subject_label: 'organization',
        title: 'The organization has no admin',
        detail: `No member who can sign in has the admin role${besides}, so nobody can see every connection or revoke other people's connections.`,
        recommendation: 'Give the admin role to at least two people (npm run admin -- user add … --role admin).',
      }];
    }
    return [{
      check: 'admin_coverage', severity: 'low', subject_kind: 'user', subject_id: admins[0].user_id, subject_label: admins[0].email,
      title: 'Only one admin',
      detail: `${admins[0].email} is the only admin${besides}. If that account is lost or locked, nobody can revoke other members' connections.`,
      recommendation: 'Add a second admin.',
    }];
  },

  dynamic_client_write_scope: ({ connections }) =>
    connections
      .filter((c) => c.revoked_at === null && c.client_kind === 'dynamic' && writeScopes(c).length > 0)
      .map((c) => ({
        check: 'dynamic_client_write_scope', severity: 'high', subject_kind: 'connection', subject_id: c.id, subject_label: clientLabel(c),
        title: 'Self-registered client holds write scopes',
        detail: `Connection ${c.id}: the client "${c.client_name ?? c.client_id}" registered itself (its identity is not verified) and may write: ${writeScopes(c).join(', ')}.`,
        recommendation: 'Confirm the person uses this client; otherwise revoke the connection, or reconnect with read-only scopes.',
      })),

  inactive_admin: ({ members, now }) =>
    members
      .filter((m) => m.role === 'admin' && Math.max(m.last_login_at ?? 0, m.joined_at) < now - INACTIVE_ADMIN_DAYS * DAY_MS)
      .map((m) => ({
        check: 'inactive_admin', severity: 'high', subject_kind: 'user', subject_id: m.user_id, subject_label: m.email,
        title: `Admin without a sign-in for ${INACTIVE_ADMIN_DAYS} days`,
        detail: m.last_login_at === null
          ? `${m.email} is an admin and has never signed in (admin for ${days(now - m.joined_at)} days).`
          : `${m.email} is an admin and last signed in ${days(now - m.last_login_at)} days ago.`,
        recommendation: 'Remove the admin role from accounts that are not in use.',
      })),

  stale_connection: ({ connections, now }) =>
    connections
      .filter((c) => c.revoked_at === null && (c.last_used_at ?? c.created_at) < now - STALE_CONNECTION_DAYS * DAY_MS)
      .map((c) => ({
        check: 'stale_connection', severity: 'medium', subject_kind: 'connection', subject_id: c.id, subject_label: clientLabel(c),
        title: `Connection unused for ${STALE_CONNECTION_DAYS} days`,
        detail: c.last_used_at === null
          ? `Connection ${c.id} (${clientLabel(c)}) was created ${days(now - c.created_at)} days ago and has never been used.`
          : `Connection ${c.id} (${clientLabel(c)}) was last used ${days(now - c.last_used_at)} days ago.`,
        recommendation: 'Revoke connections nobody uses; the client can connect again when it is needed.',
      })),

  connection_sprawl: ({ connections, members }) => {
    const active = new Map<string, number>();
    for (const c of connections) if (c.revoked_at === null) active.set(c.user_id, (active.get(c.user_id) ?? 0) + 1);
    return [...active]
      .filter(([, count]) => count >= CONNECTION_SPRAWL)
      .map(([userId, count]) => {
        const email = members.find((m) => m.user_id === userId)?.email ?? userId;
        return {
          check: 'connection_sprawl', severity: 'low', subject_kind: 'user', subject_id: userId, subject_label: email,
          title: `Member with ${count} active connections`,
          detail: `${email} has ${count} active connections (threshold ${CONNECTION_SPRAWL}); each is a client that can act for them.`,
          recommendation: 'Review the person\'s connections in the console and revoke those no longer needed.',
        } satisfies FindingDraft;
      });
  },

  inactive_member: ({ members, now }) =>
    members
      .filter((m) => m.role === 'member' && Math.max(m.last_login_at ?? 0, m.joined_at) < now - INACTIVE_MEMBER_DAYS * DAY_MS)
      .map((m) => ({
        check: 'inactive_member', severity: 'low', subject_kind: 'user', subject_id: m.user_id, subject_label: m.email,
        title: `Member without a sign-in for ${INACTIVE_MEMBER_DAYS} days`,
        detail: m.last_login_at === null ? `${m.email} has never signed in.` : `${m.email} last signed in ${days(now - m.last_login_at)} days ago.`,
        recommendation: 'Remove memberships of people who left.',
      })),

  recent_revocation: ({ connections, now }) =>
    connections
      .filter((c) => c.revoked_at !== null && c.revoked_at >= now - RECENT_REVOCATION_DAYS * DAY_MS)
      .map((c) => ({
        check: 'recent_revocation', severity: 'info', subject_kind: 'connection', subject_id: c.id, subject_label: clientLabel(c),
        title: 'Connection revoked recently',
        detail: `Connection ${c.id} (${clientLabel(c)}) was revoked ${days(now - c.revoked_at!)} days ago, after ${c.last_used_at ? `its last use ${days(now - c.last_used_at)} days ago` : 'never being used'}.`,
        recommendation: 'Check in the audit log that the revocation was intended and what the client did before it.',
      })),
};

/** Runs every check; most severe findings first. */
export function runChecks(input: { connections: ConnectionSnapshot[]; members: MemberSnapshot[]; now: number }): CheckResult {
  const findings = Object.values(CHECKS).flatMap((check) => check(input));
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity]);
  return { checks_run: Object.keys(CHECKS).length, subjects_examined: input.connections.length + input.members.length, findings };
}
