/** aegis through the MCP pipeline with a real SDK client, on every database. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ExecutionContext } from 'ava';
import { aegis } from '../../mcp/products/aegis/index.js';
import { addMembership, createTenant, createUser } from '../../db/accounts.js';
import { createConnection } from '../../db/grant_store.js';
import { issueAccessToken } from '../helpers/grants.js';
import { connect } from '../helpers/mcp.js';
import {
  assertConfirmationFlow, assertCrossTenant, assertInsufficientScope, assertInvalidArguments, assertToolError, productSuite, type ProductEnv,
} from './product_suite.js';

const each = productSuite('aegis');
const ALL = Object.keys(aegis.scopes);
const DAY = 86_400_000;

each('every aegis tool is refused with insufficient_scope without its scope', async (t, env) => {
  for (const tool of aegis.tools) {
    await assertInsufficientScope(t, env, 'aegis', 'acme', ALL.filter((s) => s !== tool.scope), tool.name, {}, tool.scope);
  }
});

/**
 * A tenant of its own whose set-up has one of every problem the scan looks for, and a client
 * connected to it. Concurrent tests add connections to acme and globex, so exact results need this.
 */
async function postureTenant(env: ProductEnv) {
  const db = env.server.db;
  const now = Date.now();
  const tag = Math.random().toString(36).slice(2, 8);
  const tenant = await createTenant(db, { slug: `posture-${tag}`, name: 'Posture Test' });
  const user = async (name: string, role: 'admin' | 'member' | null, joinedDaysAgo: number, lastLoginDaysAgo: number | null) => {
    const created = await createUser(db, { email: `${name}-${tag}@posture.example`, password: 'correct horse battery' });
    if (role) {
      await addMembership(db, { userId: created.id, tenantId: tenant.id, role });
      await db('memberships').where({ user_id: created.id, tenant_id: tenant.id }).update({ created_at: now - joinedDaysAgo * DAY });
    }
    await db('users').where({ id: created.id }).update({ last_login_at: lastLoginDaysAgo === null ? null : now - lastLoginDaysAgo * DAY });
    return created;
  };
  const staleAdmin = await user('stale-admin', 'admin', 100, 40);
  const activeAdmin = await user('active-admin', 'admin', 100, 0);
  const idleMember = await user('idle-member', 'member', 200, null);
  const busyMember = await user('busy-member', 'member', 10, 1);
  const ghost = await user('ghost', null, 0, 0);
  const connection = async (userId: string, kind: 'registered' | 'dynamic', scopes: string[], fields: { last_used_at?: number | null; revoked_at?: number | null; created_at?: number } = {}) => {
    const row = await createConnection(db, {
      grantId: `g-${Math.random()}`, tenantId: tenant.id, userId, clientId: `client-${Math.random()}`, clientName: `${kind} client`, clientKind: kind,
      product: 'cavalier', resource: `${env.server.mcpUrl}/cavalier`, scopes,
    });
    await db('connections').where({ id: row.id }).update({ last_used_at: now, ...fields });
    return row.id;
  };
  const stale = await connection(busyMember.id, 'registered', ['cavalier.quotes.read'], { last_used_at: now - 45 * DAY, created_at: now - 90 * DAY });
  const neverUsed = await connection(busyMember.id, 'registered', ['cavalier.deals.read'], { last_used_at: null, created_at: now - 31 * DAY });
  const selfRegistered = await connection(busyMember.id, 'dynamic', ['cavalier.quotes.read', 'cavalier.quotes.write']);
  const dynamicReadOnly = await connection(busyMember.id, 'dynamic', ['cavalier.quotes.read']);
  const orphan = await connection(ghost.id, 'registered', ['cavalier.deals.read']);
  const justRevoked = await connection(activeAdmin.id, 'registered', ['cavalier.deals.read'], { revoked_at: now - 2 * DAY });
  await connection(activeAdmin.id, 'registered', ['cavalier.deals.read'], { revoked_at: now - 30 * DAY });
  for (let i = 0; i < 10; i += 1) await connection(idleMember.id, 'registered', ['cavalier.sows.read']);

  const issued = await issueAccessToken(db, { tenantId: tenant.id, userId: activeAdmin.id, product: 'aegis', resource: `${env.server.mcpUrl}/aegis`, scopes: ALL });
  const connected = await connect(env.server, { product: 'aegis', tenant: 'acme', scopes: [], token: issued.token });
  return {
    tenant, client: connected.client, close: connected.close,
    users: { staleAdmin, activeAdmin, idleMember, busyMember, ghost },
    connections: { stale, neverUsed, selfRegistered, dynamicReadOnly, orphan, justRevoked, own: issued.connection.id },
  };
}

async function call(t: ExecutionContext, client: Client, name: string, args: Record<string, unknown> = {}) {
  const result = await client.callTool({ name, arguments: args });
  if (result.isError) t.fail(`${name}: ${JSON.stringify(result.structuredContent)}`);
  return result.structuredContent as any;
}

each('start_scan finds exactly the problems of the tenant\'s own set-up, most severe first', async (t, env) => {
  const fixture = await postureTenant(env);
  try {
    const scan = await call(t, fixture.client, 'aegis.start_scan');
    const { users, connections } = fixture;
    const found = scan.findings.map((f: any) => `${f.severity} ${f.check} ${f.subject.id}`).sort();
    t.deepEqual(found, [
      `critical orphaned_connection ${connections.orphan}`,
      `high dynamic_client_write_scope ${connections.own}`, // the aegis client itself: self-registered, holds aegis write scopes
      `high dynamic_client_write_scope ${connections.selfRegistered}`,
      `high inactive_admin ${users.staleAdmin.id}`,
      `info recent_revocation ${connections.justRevoked}`,
      `low connection_sprawl ${users.idleMember.id}`,
      `low inactive_member ${users.idleMember.id}`,
      `medium stale_connection ${connections.neverUsed}`,
      `medium stale_connection ${connections.stale}`,
    ].sort());
    const ranks = { critical: 4, high: 3, medium: 2, low: 1, info: 0 } as Record<string, number>;
    t.deepEqual(scan.findings.map((f: any) => ranks[f.severity]), [...scan.findings.map((f: any) => ranks[f.severity])].sort((a, b) => b - a));
    t.deepEqual(scan.open_findings, { critical: 1, high: 3, medium: 2, low: 2, info: 1 });
    t.is(scan.subjects_examined, 18 + 4); // 17 fixture connections + the aegis client's own, and 4 members
    t.is(scan.checks_run, 8);
    const inactive = scan.findings.find((f: any) => f.check === 'inactive_admin');
    t.regex(inactive.detail, /last signed in 40 days ago/);
    t.is(inactive.subject.label, fixture.users.staleAdmin.email);
    const stale = scan.findings.find((f: any) => f.subject.id === connections.stale);
    t.regex(stale.detail, /last used 45 days ago/);
    t.regex(scan.findings.find((f: any) => f.check === 'dynamic_client_write_scope' && f.subject.id === connections.selfRegistered).detail, /may write: cavalier\.quotes\.write/);

    // Nothing of acme or globex leaks into another tenant's scan.
    const acmeIds = new Set((await env.server.db('connections').where({ tenant_id: env.server.tenants.acme.id }).select('id')).map((r: any) => r.id));
    t.false(scan.findings.some((f: any) => acmeIds.has(f.subject.id)));
  } finally {
    await fixture.close();
  }
});

each('list_findings filters by severity and status; resolve_finding records who, when and why, once', async (t, env) => {
  const fixture = await postureTenant(env);
  try {
    const scan = await call(t, fixture.client, 'aegis.start_scan');
    const high = await call(t, fixture.client, 'aegis.list_findings', { severity: 'high' });
    t.is(high.scan_id, scan.id, 'defaults to the latest scan');
    t.is(high.findings.length, 3);
    t.true(high.findings.every((f: any) => f.severity === 'high' && f.status === 'open'));

    const target = high.findings.find((f: any) => f.check === 'inactive_admin');
    const resolved = await call(t, fixture.client, 'aegis.resolve_finding', { finding_id: target.id, note: 'Removed the admin role.' });
    t.like(resolved, { id: target.id, status: 'resolved', resolved_by: fixture.users.activeAdmin.id, resolution_note: 'Removed the admin role.', already_resolved: false });
    t.truthy(resolved.resolved_at);
    const again = await call(t, fixture.client, 'aegis.resolve_finding', { finding_id: target.id, note: 'Something else' });
    t.like(again, { already_resolved: true, resolution_note: 'Removed the admin role.', resolved_at: resolved.resolved_at });

    const open = await call(t, fixture.client, 'aegis.list_findings', { scan_id: scan.id, status: 'open' });
    t.is(open.findings.length, 8);
    t.false(open.findings.some((f: any) => f.id === target.id));
    const done = await call(t, fixture.client, 'aegis.list_findings', { status: 'resolved' });
    t.deepEqual(done.findings.map((f: any) => f.id), [target.id]);
    const page = await call(t, fixture.client, 'aegis.list_findings', { limit: 4 });
    t.is(page.findings.length, 4);
    t.is(page.findings[0].severity, 'critical');
    const rest = await call(t, fixture.client, 'aegis.list_findings', { limit: 10, cursor: page.next_cursor });
    t.is(rest.findings.length, 5);
    t.is(new Set([...page.findings, ...rest.findings].map((f: any) => f.id)).size, 9);

    const counted = await call(t, fixture.client, 'aegis.get_scan', { scan_id: scan.id });
    t.deepEqual(counted.open_findings, { critical: 1, high: 2, medium: 2, low: 2, info: 1 });
    t.is(counted.resolved_findings, 1);
    t.is(counted.findings_total, 9);
    const finding = await call(t, fixture.client, 'aegis.get_finding', { finding_id: target.id });
    t.is(finding.status, 'resolved');

    const severity = await fixture.client.callTool({ name: 'aegis.list_findings', arguments: { severity: 'severe' } }).catch((e) => e);
    t.is(severity.data?.field, 'severity');
  } finally {
    await fixture.close();
  }
});

each('a new scan sees what changed; list_scans shows both, newest first', async (t, env) => {
  const fixture = await postureTenant(env);
  try {
    const first = await call(t, fixture.client, 'aegis.start_scan');
    await env.server.db('connections').where({ id: fixture.connections.orphan }).update({ revoked_at: Date.now() });
    const second = await call(t, fixture.client, 'aegis.start_scan');
    t.is(second.open_findings.critical, 0);
    t.true(second.findings.some((f: any) => f.check === 'recent_revocation' && f.subject.id === fixture.connections.orphan));
    const scans = await call(t, fixture.client, 'aegis.list_scans');
    t.deepEqual(scans.scans.map((s: any) => s.id), [second.id, first.id]);
    t.is(scans.scans[1].open_findings.critical, 1);
  } finally {
    await fixture.close();
  }
});

each('a disabled admin is no admin coverage: one admin left is low, none left is critical', async (t, env) => {
  const fixture = await postureTenant(env);
  const coverage = async () => (await call(t, fixture.client, 'aegis.start_scan')).findings.filter((f: any) => f.check === 'admin_coverage');
  const disable = (userId: string) => env.server.db('users').where({ id: userId }).update({ disabled_at: Date.now() });
  try {
    t.deepEqual(await coverage(), [], 'two admins who can sign in');
    await disable(fixture.users.staleAdmin.id);
    const one = await coverage();
    t.is(one.length, 1);
    t.like(one[0], { severity: 'low', subject: { kind: 'user', id: fixture.users.activeAdmin.id } });
    t.regex(one[0].detail, /is the only admin \(1 admin account is disabled\)\./);
    await disable(fixture.users.activeAdmin.id);
    const none = await coverage();
    t.is(none.length, 1);
    t.like(none[0], { severity: 'critical', subject: { kind: 'organization' } });
    t.regex(none[0].detail, /^No member who can sign in has the admin role \(2 admin accounts are disabled\)/);
  } finally {
    await fixture.close();
  }
});

each('delete_scan follows the confirmation protocol and deletes the scan\'s findings', async (t, env) => {
  const fixture = await postureTenant(env);
  try {
    const scan = await call(t, fixture.client, 'aegis.start_scan');
    const first = await fixture.client.callTool({ name: 'aegis.delete_scan', arguments: { scan_id: scan.id } });
    const structured = first.structuredContent as any;
    t.true(first.isError);
    t.is(structured.code, 'confirmation_required');
    t.regex(structured.will_destroy, new RegExp(`Scan ${scan.id} and all of its findings`));
    t.is((await env.server.db('aegis_findings').where({ scan_id: scan.id })).length, 9);
    const done = await call(t, fixture.client, 'aegis.delete_scan', { scan_id: scan.id, confirmed: true });
    t.like(done, { deleted: true, id: scan.id, findings_deleted: 9 });
    t.is((await env.server.db('aegis_findings').where({ scan_id: scan.id })).length, 0);
    t.falsy(await env.server.db('aegis_scans').where({ id: scan.id }).first());
    const empty = await call(t, fixture.client, 'aegis.list_findings');
    t.deepEqual(empty, { scan_id: null, findings: [], next_cursor: null });
  } finally {
    await fixture.close();
  }
});

each('delete_scan on a demo tenant: confirmation_required changes nothing, confirmed deletes once', async (t, env) => {
  const scan = await env.ok(t, 'acme', ALL, 'aegis.start_scan');
  await assertConfirmationFlow(t, env, 'acme', ALL, 'aegis.delete_scan', { scan_id: scan.id }, {
    sentence: /all of its findings, with their resolution notes, will be permanently deleted/,
    unchanged: async () => {
      t.truthy(await env.server.db('aegis_scans').where({ id: scan.id }).first());
    },
  });
});

each('the demo tenants have a real scan; globex has triaged its admin-coverage finding', async (t, env) => {
  const globex = await env.ok(t, 'globex', ALL, 'aegis.list_findings', { status: 'resolved' });
  const coverage = globex.findings.find((f: any) => f.check === 'admin_coverage');
  t.truthy(coverage);
  t.is(coverage.resolution_note, 'Accepted for now: a second admin starts next month.');
  t.regex(coverage.detail, /admin@globex\.example is the only admin/);
  const acmeScans = await env.ok(t, 'acme', ALL, 'aegis.list_scans');
  t.true(acmeScans.scans.length >= 1);
});

each('scan and finding ids of another tenant are forbidden_cross_tenant', async (t, env) => {
  const foreignScan = (await env.ok(t, 'globex', ALL, 'aegis.list_scans')).scans.at(-1).id;
  const foreignFinding = (await env.ok(t, 'globex', ALL, 'aegis.list_findings', { scan_id: foreignScan })).findings[0].id;
  await assertCrossTenant(t, env, 'aegis', 'acme', ALL, 'aegis.get_scan', { scan_id: foreignScan });
  await assertCrossTenant(t, env, 'aegis', 'acme', ALL, 'aegis.list_findings', { scan_id: foreignScan });
  await assertCrossTenant(t, env, 'aegis', 'acme', ALL, 'aegis.delete_scan', { scan_id: foreignScan, confirmed: true });
  await assertCrossTenant(t, env, 'aegis', 'acme', ALL, 'aegis.resolve_finding', { finding_id: foreignFinding });
  t.truthy(await env.server.db('aegis_scans').where({ id: foreignScan }).first());
  await assertToolError(t, env, 'acme', ALL, 'aegis.get_finding', { finding_id: '00000000-0000-4000-8000-000000000001' }, 'not_found');
  await assertInvalidArguments(t, env, 'acme', ALL, 'aegis.resolve_finding', { finding_id: foreignFinding, note: 'x'.repeat(1001) }, 'note');
  await assertInvalidArguments(t, env, 'acme', ALL, 'aegis.start_scan', { tenant_id: env.server.tenants.globex.id }, 'tenant_id');
});

each('scan and finding resources and the triage_findings prompt work end to end', async (t, env) => {
  const fixture = await postureTenant(env);
  try {
    const scan = await call(t, fixture.client, 'aegis.start_scan');
    const read = JSON.parse(((await fixture.client.readResource({ uri: `portico://aegis/scans/${scan.id}` })).contents[0] as { text: string }).text);
    t.is(read.id, scan.id);
    t.is(read.findings.length, 9);
    t.is(read.findings[0].severity, 'critical');
    const orphan = scan.findings.find((f: any) => f.check === 'orphaned_connection');
    const finding = JSON.parse(((await fixture.client.readResource({ uri: `portico://aegis/findings/${orphan.id}` })).contents[0] as { text: string }).text);
    t.is(finding.subject.id, fixture.connections.orphan);

    const prompt = await fixture.client.getPrompt({ name: 'aegis.triage_findings', arguments: {} });
    const [embedded, instructions] = prompt.messages;
    t.is(embedded.content.type, 'resource');
    const resource = (embedded.content as { resource: { uri: string; text: string } }).resource;
    t.is(resource.uri, `portico://aegis/scans/${scan.id}`);
    t.is(JSON.parse(resource.text).findings.length, 9);
    t.regex((instructions.content as { text: string }).text, /Triage the 9 open findings of posture scan/);
    t.regex((instructions.content as { text: string }).text, /1 critical, 3 high, 2 medium, 2 low, 1 info/);
  } finally {
    await fixture.close();
  }
});
