/** Page bodies of the console. Everything user- or client-supplied is escaped by `html`. */
import type { ConnectionView } from '../../db/grant_store.js';
import type { KeysetPage } from '../../db/keyset.js';
import { AUDIT_KINDS, type AuditVerification, type DbAuditRow } from '../../db/audit.js';
import { DATE } from '../../shared/dates.js';
import { escapeUnshowable } from '../../shared/unshowable.js';
import { activityChart, html, Html, plural, time } from './html.js';

export interface PageContext {
  base: string;
  csrf: string;
  describeScope(scope: string): string | undefined;
  productTitle(id: string): string;
}

export function loginPage(p: PageContext, options: { error?: string; email?: string; notice?: string; next?: string }): Html {
  // A refused sign-in: the fields are marked and described by the message (WCAG 2.1 3.3.1).
  const invalid = options.error ? new Html(' aria-invalid="true" aria-describedby="sign-in-error"') : '';
  return html`<div class="narrow card">
    <h1>Sign in to the console</h1>
    <p class="muted">See and revoke the AI clients connected to your organization, and read their audit log.</p>
    ${options.notice && !options.error ? html`<p class="notice" role="status">${options.notice}</p>` : ''}
    ${options.error ? html`<p class="error" role="alert" id="sign-in-error">${options.error}</p>` : ''}
    <form method="post" action="${p.base}/login">
      <input type="hidden" name="csrf" value="${p.csrf}">${options.next ? html`
      <input type="hidden" name="next" value="${options.next}">` : ''}
      <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}"${invalid}>
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required${invalid}>
      <p><button type="submit">Sign in</button></p>
    </form></div>`;
}

export function organizationPage(p: PageContext, memberships: Array<{ tenant_id: string; tenant_name: string; tenant_slug: string; role: string }>, current?: string, next?: string): Html {
  return html`<div class="narrow card">
    <h1>Choose an organization</h1>
    <form method="post" action="${p.base}/organization">
      <input type="hidden" name="csrf" value="${p.csrf}">${next ? html`
      <input type="hidden" name="next" value="${next}">` : ''}
      <label for="tenant">Organization</label>
      <select id="tenant" name="tenant">${memberships.map((m) => html`<option value="${m.tenant_slug}" ${m.tenant_id === current ? new Html('selected') : ''}>${m.tenant_name} (${m.role})</option>`)}</select>
      <p><button type="submit">Continue</button>${current ? html` <a class="button secondary" href="${p.base}/connections">Cancel</a>` : ''}</p>
    </form></div>`;
}

function clientCell(c: ConnectionView): Html {
  const kind = c.client_kind === 'registered' ? html`<span class="badge ok">registered by an admin</span>`
    : c.client_kind === 'metadata_document' ? html`<span class="badge warn">metadata document (identified by its URL)</span>`
    : html`<span class="badge warn">registered itself (unverified)</span>`;
  return html`<strong>${c.client_name ?? 'Unnamed client'}</strong><br>${kind}`;
}

function scopeList(p: PageContext, scopes: string): Html {
  return html`<ul class="scopes">${scopes.split(' ').filter(Boolean).map((s) => html`<li>${p.describeScope(s) ?? s} <code>${s}</code></li>`)}</ul>`;
}

/** The links to a keyset listing's newer and older pages (db/keyset.ts), those that exist. */
function pager(newer: string | undefined, older: string | undefined, noun: string): Html {
  return html`<nav class="pager" aria-label="Pages">${newer ? html`<a class="button secondary" href="${newer}">← Newer ${noun}</a>` : ''}${older ? html`<a class="button secondary older" href="${older}">Older ${noun} →</a>` : ''}</nav>`;
}

/** `connections`: a page of them (db/keyset.ts); the pager's links keep "Show revoked". */
export function connectionsPage(p: PageContext, page: KeysetPage<ConnectionView>, options: { isAdmin: boolean; showRevoked: boolean; notice?: string; chart: Parameters<typeof activityChart> }): Html {
  const connections = page.rows;
  const pageAt = (cursor: string | undefined) => cursor && `${p.base}/connections?${new URLSearchParams({ ...(options.showRevoked ? { revoked: '1' } : {}), cursor })}`;
  const newerLink = pageAt(page.previous);
  const olderLink = pageAt(page.next);
  return html`
    <h1>Connections</h1>
    ${options.notice ? html`<p class="card" role="status">${options.notice}</p>` : ''}
    <section class="card" aria-labelledby="activity"><h2 id="activity" style="margin-top:0;font-size:1.05rem">Activity, last ${options.chart[1]} days</h2>${activityChart(...options.chart)}</section>
    <section class="card">
      <p class="muted">${options.isAdmin ? 'Every AI client connected to this organization.' : 'The AI clients you connected.'}
        ${options.showRevoked ? html`<a href="${p.base}/connections">Hide revoked</a>` : html`<a href="${p.base}/connections?revoked=1">Show revoked</a>`}</p>
      ${connections.length === 0 ? html`<p>${options.showRevoked ? 'No connections yet.' : 'No active connections.'} When someone connects an AI client to a product server, it appears here${options.showRevoked ? '' : '; revoked connections are listed under “Show revoked”'}.</p>` : html`
      <table><thead><tr><th>Client</th><th>Product</th><th>Scopes</th><th>Person</th><th>Created</th><th>Last used</th><th>Calls</th><th></th></tr></thead><tbody>
      ${connections.map((c) => html`<tr data-connection="${c.id}">
        <td>${clientCell(c)}</td><td>${p.productTitle(c.product)}</td><td>${scopeList(p, c.scopes)}</td><td>${c.user_email}</td>
        <td>${time(c.created_at)}</td><td>${time(c.last_used_at)}</td><td>${c.call_count}</td>
        <td>${c.revoked_at ? html`<span class="badge bad">revoked</span>` : ''} <a href="${p.base}/connections/${c.id}">Details</a></td></tr>`)}
      </tbody></table>`}
      ${pager(newerLink, olderLink, 'connections')}
    </section>`;
}

/** `people`: e-mail addresses by user id, for the Person column. */
function auditTable(p: PageContext, rows: DbAuditRow[], people: ReadonlyMap<string, string>): Html {
  if (!rows.length) return html`<p>No audit records match.</p>`;
  return html`<table><thead><tr><th>Time</th><th>Kind</th><th>Name</th><th>Product</th><th>Person and client</th><th>Outcome</th><th>Duration</th><th>Connection</th></tr></thead><tbody>
    ${rows.map((r) => html`<tr><td>${time(r.time)}</td><td>${r.kind}</td><td><code>${escapeUnshowable(r.name)}</code></td><td>${r.product ?? ''}</td>
      <td>${r.user_id ? people.get(r.user_id) ?? r.user_id : ''}${r.client_id ? html`<br><code>${r.client_id}</code>` : ''}</td>
      <td><span class="badge ${r.outcome === 'ok' ? 'ok' : r.outcome === 'confirmation_required' ? 'warn' : 'bad'}">${r.outcome}</span></td>
      <td>${r.duration_ms === null ? '' : `${r.duration_ms} ms`}</td>
      <td>${r.connection_id ? html`<a href="${p.base}/connections/${r.connection_id}">${r.connection_id.slice(0, 8)}</a>` : ''}</td></tr>`)}
    </tbody></table>`;
}

/** When a revoked connection was revoked, by whom (a person who did) and why, in words. */
function revokedWhen(c: ConnectionView, why: string | undefined): Html {
  return html`${time(c.revoked_at)}${c.revoked_by_email ? html` by ${c.revoked_by_email}` : ''}${why ? html` (${why})` : ''}`;
}

/** `why`: revocationReason's words, for a revoked connection. */
export function connectionPage(p: PageContext, c: ConnectionView, recent: DbAuditRow[], people: ReadonlyMap<string, string>, why?: string): Html {
  return html`
    <p><a href="${p.base}/connections">← Connections</a></p>
    <h1>${c.client_name ?? 'Unnamed client'} → ${p.productTitle(c.product)}</h1>
    <section class="card"><table><tbody>
      <tr><th>Client</th><td>${clientCell(c)}<br><code>${c.client_id}</code></td></tr>
      <tr><th>Product server</th><td><code>${c.resource}</code></td></tr>
      <tr><th>Scopes</th><td>${scopeList(p, c.scopes)}</td></tr>
      <tr><th>Person</th><td>${c.user_email}</td></tr>
      <tr><th>Created</th><td>${time(c.created_at)}</td></tr>
      <tr><th>Last used</th><td>${time(c.last_used_at)} (${plural(c.call_count, 'call')})</td></tr>
      <tr><th>Status</th><td>${c.revoked_at ? html`<span class="badge bad">revoked</span> ${revokedWhen(c, why)}` : html`<span class="badge ok">active</span>`}</td></tr>
    </tbody></table>
    ${c.revoked_at ? '' : html`<p><a class="button" href="${p.base}/connections/${c.id}/revoke">Revoke…</a></p>`}
    </section>
    <section class="card"><h2 style="margin-top:0;font-size:1.05rem">Recent activity</h2>${auditTable(p, recent, people)}
      <p><a href="${p.base}/audit?connection=${c.id}">Full audit log of this connection</a></p></section>`;
}

/** For a connection already revoked (Back after revoking, a stale link), its state instead of the button. */
export function revokePage(p: PageContext, c: ConnectionView, why?: string): Html {
  if (c.revoked_at) {
    return html`<div class="narrow card">
    <h1>This connection is already revoked</h1>
    <p><strong>${c.client_name ?? 'Unnamed client'}</strong> lost its access to <strong>${p.productTitle(c.product)}</strong>
      for ${c.user_email} on ${revokedWhen(c, why)}. There is nothing more to revoke.</p>
    <p><a class="button secondary" href="${p.base}/connections/${c.id}">Back to the connection</a></p></div>`;
  }
  return html`<div class="narrow card">
    <h1>Revoke this connection?</h1>
    <p><strong>${c.client_name ?? 'Unnamed client'}</strong> will immediately lose access to <strong>${p.productTitle(c.product)}</strong>
      for ${c.user_email}. Its tokens stop working on every instance and its open sessions close. This cannot be undone;
      the client would have to be authorized again.</p>
    <form method="post" action="${p.base}/connections/${c.id}/revoke">
      <input type="hidden" name="csrf" value="${p.csrf}">
      <button type="submit" class="danger">Revoke connection</button>
      <a class="button secondary" href="${p.base}/connections/${c.id}">Cancel</a>
    </form></div>`;
}

/** `next`, `previous`: the cursors of the older and the newer records (db/audit.ts queryAudit); the links keep the filters. */
export function auditPage(p: PageContext, rows: DbAuditRow[], options: { query: Record<string, string>; next?: string; previous?: string; isAdmin: boolean; people: ReadonlyMap<string, string> }): Html {
  const q = options.query;
  const pageAt = (cursor: string | undefined) => cursor && `${p.base}/audit?${new URLSearchParams({ ...q, cursor })}`;
  const newerLink = pageAt(options.previous);
  const nextLink = pageAt(options.next);
  // The export takes the filters, not the page's limit and cursor: it is every record they select.
  const exportQuery = new URLSearchParams(Object.entries(q).filter(([k]) => k !== 'cursor' && k !== 'limit'));
  return html`
    <h1>Audit log</h1>
    <form class="card filters" method="get" action="${p.base}/audit" aria-label="Filters">
      <div><label for="f-product">Product</label><input id="f-product" name="product" value="${q.product ?? ''}"></div>
      <div><label for="f-tool">Tool</label><input id="f-tool" name="tool" value="${q.tool ?? ''}" placeholder="forge.create_conversation"></div>
      <div><label for="f-client">Client</label><input id="f-client" name="client" value="${q.client ?? ''}"></div>
      <div><label for="f-connection">Connection</label><input id="f-connection" name="connection" value="${q.connection ?? ''}"></div>
      <div><label for="f-outcome">Outcome</label><input id="f-outcome" name="outcome" value="${q.outcome ?? ''}" placeholder="ok"></div>
      <div><label for="f-kind">Kind</label><select id="f-kind" name="kind"><option value="">any</option>${AUDIT_KINDS.map((k) => html`<option value="${k}" ${q.kind === k ? new Html('selected') : ''}>${k}</option>`)}</select></div>
      ${timeField('f-from', 'from', 'From', q.from)}
      ${timeField('f-to', 'to', 'To', q.to)}
      ${q.limit ? html`<input type="hidden" name="limit" value="${q.limit}">` : ''}
      <div><button type="submit">Filter</button> <a href="${p.base}/audit">Clear</a></div>
    </form>
    <section class="card">${auditTable(p, rows, options.people)}
      ${pager(newerLink, nextLink, 'records')}
      <p class="muted">Export: <a href="${p.base}/audit/export?${exportQuery.toString()}&amp;format=jsonl">JSON Lines</a> ·
        <a href="${p.base}/audit/export?${exportQuery.toString()}&amp;format=csv">CSV</a>
        ${options.isAdmin ? html` · <a href="${p.base}/audit/verify">Verify the chain</a>` : ''}</p>
    </section>`;
}

/**
 * The From and To fields. A date field holds only a calendar date: a browser empties it for a time
 * or epoch ms from the address (`from=2026-03-01T10:00Z`), so the form would show no filter while
 * the listing applies one, and drop it on the next Filter. Such a value is shown, and kept, as typed.
 */
function timeField(id: string, name: string, label: string, value: string | undefined): Html {
  const type = value === undefined || DATE.test(value) ? 'date' : 'text';
  return html`<div><label for="${id}">${label}</label><input id="${id}" name="${name}" type="${type}" value="${value ?? ''}"${type === 'text' ? new Html(' placeholder="YYYY-MM-DD" spellcheck="false"') : ''}></div>`;
}

export function verifyPage(p: PageContext, result: AuditVerification, checkpoint?: { seq: number; hash: string }): Html {
  const given = checkpoint ? `${checkpoint.seq}:${checkpoint.hash}` : '';
  return html`<h1>Audit chain verification</h1><section class="card">
    ${result.ok ? html`<p><span class="badge ok">intact</span> ${result.checked === 1 ? 'The one record verifies' : result.checked ? `All ${result.checked} records chain correctly` : 'There are no records yet'}${checkpoint ? html`, through the checkpoint given (record #${checkpoint.seq})` : ''}.</p>`
      : html`<p class="error" role="alert">The chain is broken at record #${result.first_broken!.seq}${result.first_broken!.id ? html` (<code>${result.first_broken!.id}</code>)` : ''}: ${result.first_broken!.reason}.
        ${plural(result.checked, 'record')} before it verified.</p>`}
    ${result.end ? html`<p>The chain ends at record #${result.end.seq}. Its checkpoint: <code class="checkpoint">${result.end.seq}:${result.end.hash}</code></p>
      <p class="muted">Keep checkpoints somewhere outside Portico (a ticket, an e-mail to yourself). Verifying later against one
        proves that no record up to it has been changed or removed since, even by someone able to write to the database;
        so does <code>npm run admin -- audit verify --file &lt;export&gt; --checkpoint &lt;it&gt;</code> for an export.</p>` : ''}
    <form method="get" action="${p.base}/audit/verify" class="filters" aria-label="Verify against a checkpoint">
      <div><label for="v-checkpoint">Checkpoint noted earlier</label><input id="v-checkpoint" name="checkpoint" value="${given}" placeholder="42:9f86d081…" spellcheck="false" autocomplete="off"></div>
      <div><button type="submit">Verify against it</button></div>
    </form>
    <p><a href="${p.base}/audit">← Audit log</a></p></section>`;
}

/** An error page's heading, by its code: what happened in a person's words, before the detail. */
const ERROR_HEADINGS: Record<string, string> = {
  forbidden: 'Not allowed',
  insufficient_scope: 'Not allowed',
  forbidden_cross_tenant: 'Not allowed',
  not_found: 'Not found',
};

/** Carries the stable error code and the request id, as the authorization pages do, for a support request. */
export function errorPage(p: Pick<PageContext, 'base'>, error: { message: string; code: string; requestId: string }): Html {
  return html`<div class="narrow card"><h1>${ERROR_HEADINGS[error.code] ?? 'Something is not right'}</h1><p class="error" role="alert">${error.message}</p>
    <p class="muted">Error code <code>${error.code}</code> · request <code>${error.requestId}</code>.</p>
    <p><a href="${p.base}/connections">Back to the console</a></p></div>`;
}
