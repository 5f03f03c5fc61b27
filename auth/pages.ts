/**
 * The sign-in, consent and error pages of the authorization server: server-rendered HTML, no
 * framework, and one script of our own (ONCE, allowed by its hash). Every interpolated value goes
 * through `esc`.
 */
import { createHash } from 'node:crypto';

/**
 * A form is sent once. A second click on Allow while the first is answered started a second
 * navigation, which cancelled the first one's redirect back to the client: the first consent
 * created the connection, the second was answered 409 (or 404, once the first had resumed), and
 * the client never got its code. Reset when the browser shows the page again from its history.
 */
const ONCE = "addEventListener('submit',e=>{const f=e.target;if(f.dataset.sent)e.preventDefault();else f.dataset.sent='1'});addEventListener('pageshow',()=>{for(const f of document.forms)delete f.dataset.sent})";
const ONCE_HASH = `'sha256-${createHash('sha256').update(ONCE).digest('base64')}'`;

export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"'`=]/g, (c) => `&#${c.charCodeAt(0)};`);
}

const STYLE = `
*{box-sizing:border-box}
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;background:#f4f5f7;
  font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1f2328}
main{width:100%;max-width:460px;margin:24px;background:#fff;border:1px solid #d8dee4;border-radius:12px;
  box-shadow:0 1px 3px rgba(31,35,40,.08);padding:32px;overflow-wrap:anywhere}
.brand{display:flex;align-items:center;gap:8px;font-weight:600;color:#57606a;font-size:14px;margin-bottom:20px}
.brand span{display:inline-block;width:22px;height:22px;border-radius:6px;background:#2f5bea}
h1{font-size:22px;line-height:1.3;margin:0 0 8px}
p{margin:0 0 16px;color:#424a53}
label{display:block;font-weight:600;font-size:14px;margin:16px 0 6px}
input[type=email],input[type=password],select{width:100%;padding:10px 12px;border:1px solid #afb8c1;border-radius:8px;font:inherit;background:#fff}
input:focus,select:focus,button:focus,a:focus{outline:3px solid #2f5bea;outline-offset:2px}
.actions{display:flex;gap:12px;margin-top:24px}
button{flex:1;padding:11px 16px;border-radius:8px;border:1px solid #afb8c1;background:#f6f8fa;font:inherit;font-weight:600;cursor:pointer;color:#1f2328}
button.primary{background:#2f5bea;border-color:#2f5bea;color:#fff}
a.button{display:block;text-align:center;padding:11px 16px;border-radius:8px;background:#2f5bea;color:#fff;font-weight:600;text-decoration:none;margin-top:24px}
.client{border:1px solid #d8dee4;border-radius:8px;padding:12px 14px;margin:16px 0;background:#f6f8fa;font-size:14px}
.client dt{color:#57606a;float:left;clear:left;width:110px}
.client dd{margin:0 0 4px 110px}
@media (max-width:480px){.client dt{float:none;width:auto}.client dd{margin-left:0}}
.badge{display:inline-block;font-size:12px;font-weight:600;border-radius:999px;padding:1px 8px;margin-left:4px}
.badge.warn{background:#fff8c5;color:#7d4e00;border:1px solid #eac54f}
.badge.ok{background:#dafbe1;color:#116329;border:1px solid #4ac26b}
fieldset{border:1px solid #d8dee4;border-radius:8px;margin:16px 0 0;padding:8px 14px 12px}
legend{font-weight:600;font-size:14px;padding:0 4px}
.scope{display:flex;gap:10px;align-items:flex-start;margin:8px 0}
.scope input{margin-top:4px;width:18px;height:18px;flex:none}
.scope label{display:inline;font-weight:400;margin:0;font-size:15px}
.scope code{display:block;color:#57606a;font-size:12px}
.error{background:#ffebe9;border:1px solid #ff8182;color:#82071e;border-radius:8px;padding:10px 12px;margin:12px 0}
.note{font-size:13px;color:#57606a;margin-top:20px}
code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
`;

/** `forms`: the page's forms are sent once (ONCE); only the sign-in and consent pages carry it. */
function layout(title: string, body: string, forms = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${esc(title)} · Portico</title>
<style>${STYLE}</style>
${forms ? `<script>${ONCE}</script>\n` : ''}</head>
<body>
<main>
<div class="brand" aria-hidden="true"><span></span>Portico</div>
${body}
</main>
</body>
</html>`;
}

export interface ClientView {
  id: string;
  name: string;
  kind: 'registered' | 'dynamic' | 'metadata_document';
  redirectHost: string;
  loopback: boolean;
}

function clientSummary(client: ClientView): string {
  const kind =
    client.kind === 'registered'
      ? '<span class="badge ok">registered by your administrator</span>'
      : client.kind === 'metadata_document'
        ? `<span class="badge warn">identified by its web address</span>`
        : '<span class="badge warn">registered itself — not verified</span>';
  return `<dl class="client">
<dt>Application</dt><dd><strong>${esc(client.name)}</strong>${kind}</dd>
<dt>Client ID</dt><dd><code>${esc(client.id)}</code></dd>
<dt>Returns you to</dt><dd><strong>${esc(client.redirectHost)}</strong>${client.loopback ? ' <span class="badge warn">an app on this computer</span>' : ''}</dd>
</dl>`;
}

/** A refused sign-in: the fields are marked and described by the message (WCAG 2.1 3.3.1). */
const INVALID = ' aria-invalid="true" aria-describedby="sign-in-error"';

/**
 * `cancel`: the action of the Cancel form. Its button sits beside Sign in but belongs to that
 * separate form (`form` attribute), so Enter in a field still signs in (the sign-in form's default
 * button is Sign in) and the password is never sent to the Cancel action.
 */
export function loginPage(input: { action: string; cancel: string; csrf: string; client: ClientView; email?: string; error?: string }): string {
  return layout(
    'Sign in',
    `<h1>Sign in to continue</h1>
<p><strong>${esc(input.client.name)}</strong> wants to connect to your Portico account.</p>
${input.error ? `<div class="error" role="alert" id="sign-in-error">${esc(input.error)}</div>` : ''}
<form method="post" action="${esc(input.action)}">
<input type="hidden" name="csrf" value="${esc(input.csrf)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${esc(input.email ?? '')}" autofocus${input.error ? INVALID : ''}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${input.error ? INVALID : ''}>
<div class="actions"><button class="primary" type="submit">Sign in</button><button type="submit" form="cancel">Cancel</button></div>
</form>
<form id="cancel" method="post" action="${esc(input.cancel)}"><input type="hidden" name="csrf" value="${esc(input.csrf)}"></form>
${clientSummary(input.client)}`,
    true,
  );
}

export interface ConsentScope {
  scope: string;
  description: string;
  checked: boolean;
}

/**
 * Enter on a permission's checkbox submits the form implicitly (HTML "implicit submission"),
 * through the form's first submit button, which would be Deny (a disabled first button does not stop
 * it: Chromium uses the next one). So the first button is a hidden one that decides nothing: the
 * server shows the page again asking for a choice (auth/interactions.ts).
 */
const NO_DECISION = '<button type="submit" hidden></button>';

export function consentPage(input: {
  action: string;
  csrf: string;
  client: ClientView;
  userEmail: string;
  resourceTitle: string;
  resourceUri: string;
  organizations: Array<{ id: string; slug: string; name: string; selected: boolean }>;
  scopes: ConsentScope[];
  error?: string;
  /** The same authorization request with prompt=login: sign in as someone else. */
  anotherAccount?: string;
}): string {
  const options = input.organizations
    .map((o) => `<option value="${esc(o.id)}" data-slug="${esc(o.slug)}"${o.selected ? ' selected' : ''}>${esc(o.name)} (${esc(o.slug)})</option>`)
    .join('');
  const scopes = input.scopes
    .map(
      (s, i) => `<div class="scope"><input type="checkbox" id="scope-${i}" name="scope" value="${esc(s.scope)}"${s.checked ? ' checked' : ''}>
<label for="scope-${i}">${esc(s.description)}<code>${esc(s.scope)}</code></label></div>`,
    )
    .join('\n');
  return layout(
    'Allow access',
    `<h1>Allow ${esc(input.client.name)} to use ${esc(input.resourceTitle)}?</h1>
<p>Signed in as <strong>${esc(input.userEmail)}</strong>.${input.anotherAccount ? ` ${anotherAccountLink(input.anotherAccount)}` : ''}</p>
${clientSummary(input.client)}
${input.error ? `<div class="error" role="alert">${esc(input.error)}</div>` : ''}
<form method="post" action="${esc(input.action)}">
${NO_DECISION}
<input type="hidden" name="csrf" value="${esc(input.csrf)}">
<label for="tenant">Organization</label>
<select id="tenant" name="tenant" required>${options}</select>
<fieldset>
<legend>It will be able to</legend>
${scopes}
</fieldset>
<div class="actions">
<button type="submit" name="decision" value="deny">Deny</button>
<button class="primary" type="submit" name="decision" value="allow">Allow</button>
</div>
</form>
<p class="note">The connection is limited to <code>${esc(input.resourceUri)}</code> and to the organization you choose. You can revoke it at any time in the Portico console.</p>`,
    true,
  );
}

/**
 * An error page. `detail` is HTML the caller built with `esc` (shown under the message); `hint`
 * ends the page (what the person may do now).
 */
export function errorPage(input: { title: string; message: string; code: string; requestId?: string; detail?: string; hint?: string }): string {
  return layout(
    input.title,
    `<h1>${esc(input.title)}</h1>
<div class="error" role="alert">${esc(input.message)}</div>
${input.detail ?? ''}<p class="note">Error code <code>${esc(input.code)}</code>${input.requestId ? ` · request <code>${esc(input.requestId)}</code>` : ''}. ${esc(input.hint ?? 'You can close this page and start again from your application.')}</p>`,
  );
}

/** A link that starts the same authorization request again with prompt=login (auth/interactions.ts). */
export function anotherAccountLink(href: string): string {
  return `<a href="${esc(href)}">Use another account</a>`;
}

/** A way back to the application that denies the request (the consent form's Deny, alone). */
export function returnForm(input: { action: string; csrf: string; redirectHost: string }): string {
  return `<form method="post" action="${esc(input.action)}"><input type="hidden" name="csrf" value="${esc(input.csrf)}"><input type="hidden" name="decision" value="deny">` +
    `<div class="actions"><button class="primary" type="submit">Return to ${esc(input.redirectHost)}</button></div></form>\n`;
}

/**
 * An authorization error for a client Portico does not vouch for (self-registered, metadata
 * document): shown instead of an automatic redirect, with one deliberate step back to the client
 * (checklist A5(b)). `back` is the URL the error would have been redirected to, or the form the
 * provider would have posted (response_mode=form_post) — posted only when the person clicks.
 */
export function errorReturnPage(input: {
  message: string;
  code: string;
  requestId?: string;
  clientName: string;
  redirectHost: string;
  back: { href: string } | { action: string; fields: Record<string, string> };
}): string {
  const link = 'href' in input.back
    ? `<a class="button" href="${esc(input.back.href)}" rel="noreferrer">Return to ${esc(input.redirectHost)}</a>`
    : `<form method="post" action="${esc(input.back.action)}">${Object.entries(input.back.fields).map(([name, value]) => `<input type="hidden" name="${esc(name)}" value="${esc(value)}">`).join('')}` +
      `<div class="actions"><button class="primary" type="submit">Return to ${esc(input.redirectHost)}</button></div></form>`;
  return errorPage({
    title: 'This request cannot continue',
    message: input.message,
    code: input.code,
    requestId: input.requestId,
    detail: `<p><strong>${esc(input.clientName)}</strong> asked for something Portico cannot grant. Nothing was granted. The application is told why when you return to it at <strong>${esc(input.redirectHost)}</strong>.</p>
${link}
`,
    hint: 'If you did not start this, close this page.',
  });
}

/** The pages' Content-Security-Policy; `scripts`: hashes of further inline scripts a page carries ('sha256-…'). */
export function pageCsp(scripts: string[] = []): string {
  return `default-src 'none'; script-src ${[ONCE_HASH, ...scripts].join(' ')}; style-src 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'`;
}

/** Headers every interaction and error page carries (checklist G4; notes §4 — no form-action). */
export const PAGE_HEADERS: Record<string, string> = {
  'Content-Security-Policy': pageCsp(),
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
};
