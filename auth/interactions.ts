/**
 * The sign-in and consent steps of an authorization (oidc-provider "interactions"). Every route
 * lives under /oauth/interaction/:uid because the provider's `_interaction` cookie is scoped to
 * that path (notes §4). State-changing steps are POSTs with a CSRF token and a same-origin check.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import Router, { type RouterContext } from '@koa/router';
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import { errors, type InteractionResults } from 'oidc-provider';
import type { PorticoContext } from '../app.js';
import { authenticate, findUserById, lockTenant, MAX_EMAIL_LENGTH, membershipIn, membershipsOf, normaliseEmail, type Membership } from '../db/accounts.js';
import { appendAudit, type AuditInput } from '../db/audit.js';
import { translateDbError } from '../db/errors.js';
import { createConnection, lastConnectedTenant } from '../db/grant_store.js';
import { AppError, toAppError, type ErrorCode } from '../shared/errors.js';
import { readForm, type PorticoState } from '../shared/http.js';
import { claimInteraction } from './adapter.js';
import { classifyRedirectUri, clientKindOf, redirectHostOf } from './clients.js';
import { anotherAccountLink, consentPage, errorPage, esc, loginPage, PAGE_HEADERS, returnForm, type ClientView } from './pages.js';
import { ROUTES } from './provider.js';
import { WindowLimiter } from './rate_limit.js';
import { CLAIM_SCOPES, OIDC_SCOPES, type ProtectedResource, type ResourceRegistry } from './resources.js';

type Ctx = RouterContext<PorticoState>;

interface Details {
  uid: string;
  prompt: { name: string; details: Record<string, unknown> };
  params: Record<string, unknown>;
  session?: { accountId?: string };
  result?: InteractionResults;
}

const FORM_LIMIT = 16 * 1024;

export function interactionRoutes(provider: Provider, context: PorticoContext, resources: ResourceRegistry): Koa.Middleware<PorticoState> {
  const { db, secrets, config, log } = context;
  const expectedOrigin = new URL(config.authUrl).origin;
  const loginAttempts = new WindowLimiter(10, 60_000);
  const router = new Router<PorticoState>({ prefix: '/oauth/interaction' });

  /** A step's page that is gone: expired, unknown, or finished (the person went Back from the next step). */
  const EXPIRED_STEP = 'This sign-in step is finished or has expired. If you came back here from a later step, go forward again; otherwise start again from your application.';
  const csrfFor = (uid: string) => createHmac('sha256', secrets.macKey).update(`oauth-interaction:${uid}`).digest('base64url');

  /** Loads the interaction named by the cookie and checks it is the one in the URL. */
  async function interaction(ctx: Ctx): Promise<Details> {
    let details: Details;
    try {
      details = (await provider.interactionDetails(ctx.req, ctx.res)) as unknown as Details;
    } catch (thrown) {
      // The provider's own refusals (no cookie, no such interaction or session) are the person's
      // expired request; anything else (a database that does not answer) is a failure of ours.
      if (!(thrown instanceof errors.OIDCProviderError)) throw translateDbError(thrown);
      throw new AppError('not_found', EXPIRED_STEP);
    }
    if (details.uid !== ctx.params.uid) throw new AppError('not_found', EXPIRED_STEP);
    return details;
  }

  /** CSRF defence for every POST: fetch metadata, Origin, then the HMAC token (checklist G3). */
  function checkForm(ctx: Ctx, uid: string, form: URLSearchParams): void {
    const site = ctx.get('sec-fetch-site');
    if (site && site !== 'same-origin') throw new AppError('csrf_failed', 'This form was submitted from another site and was refused.');
    // Our pages are sent with Referrer-Policy: no-referrer, under which browsers send `Origin: null`
    // with the form (Fetch, "serializing a request origin"): that names no other site, and the
    // HMAC token below (bound to the interaction cookie's uid) still decides.
    const origin = ctx.get('origin');
    if (origin && origin !== 'null' && origin !== expectedOrigin) throw new AppError('csrf_failed', 'This form was submitted from another site and was refused.');
    const expected = Buffer.from(csrfFor(uid));
    const submitted = Buffer.from(form.get('csrf') ?? '');
    if (submitted.length !== expected.length || !timingSafeEqual(submitted, expected)) {
      throw new AppError('csrf_failed', 'The form expired or was tampered with. Go back and try again.');
    }
  }

  /**
   * The client of this request. A metadata-document client's document is fetched again where this
   * instance has not cached it (another instance, a restart, an entry past its age): one that
   * cannot be read then is the application's failure, said so, and trying again may help.
   */
  async function clientView(details: Details): Promise<ClientView> {
    const clientId = String(details.params.client_id);
    const client = await provider.Client.find(clientId).catch((thrown: unknown) => {
      if (!(thrown instanceof errors.OIDCProviderError) || clientKindOf(clientId) !== 'metadata_document') throw thrown;
      throw new AppError('unavailable', `The application's details could not be read from ${clientId}. Try again in a moment, or start again from your application.`, { cause: thrown });
    });
    if (!client) throw new AppError('not_found', 'The application that sent you here is not known.');
    const redirectUri = String(details.params.redirect_uri ?? client.redirectUris?.[0] ?? '');
    return {
      id: clientId,
      name: client.clientName || 'Unnamed application',
      kind: clientKindOf(clientId),
      redirectHost: redirectHostOf(redirectUri),
      loopback: classifyRedirectUri(redirectUri) === 'loopback',
    };
  }

  /** The single resource of this authorization (getResourceServerInfo already refused several). */
  function resourceOf(details: Details): { indicator: string; resource: ProtectedResource } {
    const indicator = details.params.resource;
    const resource = typeof indicator === 'string' ? resources.resolve(indicator) : undefined;
    if (typeof indicator !== 'string' || !resource) {
      throw new AppError('invalid_request', 'This request does not name one product to connect to.');
    }
    return { indicator, resource };
  }

  function requestedScopes(details: Details, resource: ProtectedResource): string[] {
    const asked = String(details.params.scope ?? '').split(' ').filter(Boolean);
    return resource.scopes.filter((s) => asked.includes(s));
  }

  /**
   * The claim scopes (`email`) asked with `openid`, which the consent page offers beside the
   * resource's scopes: granted, their claims go in the ID token. Without `openid` there is no ID
   * token to carry them, so they are not offered (and not granted).
   */
  function requestedClaimScopes(details: Details): string[] {
    const asked = String(details.params.scope ?? '').split(' ').filter(Boolean);
    return asked.includes('openid') ? CLAIM_SCOPES.filter((s) => asked.includes(s)) : [];
  }

  /**
   * The same authorization request with prompt=login, for a person signed in as the wrong account
   * (the sign-in here lasts 12 hours and has no sign-out): oidc-provider ends the first account's
   * session when another one signs in, and the client's state and PKCE challenge are unchanged.
   */
  function anotherAccountHref(details: Details): string {
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(details.params)) if (typeof value === 'string') params.set(key, value);
    params.set('prompt', 'login');
    return `${ROUTES.authorization}?${params}`;
  }

  function render(ctx: Ctx, status: number, html: string): void {
    ctx.set(PAGE_HEADERS);
    ctx.status = status;
    ctx.type = 'html';
    ctx.body = html;
  }

  async function renderConsent(ctx: Ctx, details: Details, status = 200, error?: string, chosen?: { tenant?: string; scopes?: string[] }) {
    const accountId = details.session?.accountId;
    const user = accountId ? await findUserById(db, accountId) : undefined;
    if (!user) throw new AppError('not_found', 'Your sign-in has expired. Start again from your application.');
    const { resource } = resourceOf(details);
    const memberships = mayConnect(await membershipsOf(db, user.id), resource);
    const client = await clientView(details);
    const scopes = requestedScopes(details, resource);
    const claimScopes = requestedClaimScopes(details);
    // Selected: what the person chose (a form sent back), else the organization in which this
    // application is already connected to this product for them (a step-up asks for more of that
    // connection), else the first.
    const selected = chosen?.tenant
      ?? (memberships.length > 1 ? await lastConnectedTenant(db, { userId: user.id, clientId: String(details.params.client_id), product: resource.product }) : undefined);
    if (!memberships.length) {
      // The person signed in: the application is told (access_denied, as a denial) rather than left waiting.
      return render(ctx, 403, errorPage({
        title: titleFor('forbidden'),
        message: resource.adminsOnly
          ? `Only an administrator of an organization can connect ${resources.titleOf(resource)}: it shows the organization's whole set-up.`
          : 'Your account does not belong to any active organization, so there is nothing to connect.',
        code: 'forbidden',
        requestId: ctx.state.requestId,
        detail: `<p>Signed in as <strong>${esc(user.email)}</strong>. ${anotherAccountLink(anotherAccountHref(details))}</p>\n`
          + returnForm({ action: `/oauth/interaction/${details.uid}/consent`, csrf: csrfFor(details.uid), redirectHost: client.redirectHost }),
        hint: 'Returning tells the application that nothing was granted.',
      }));
    }
    render(ctx, status, consentPage({
      action: `/oauth/interaction/${details.uid}/consent`,
      csrf: csrfFor(details.uid),
      client,
      userEmail: user.email,
      resourceTitle: resources.titleOf(resource),
      resourceUri: resource.uri,
      organizations: memberships.map((m, i) => ({
        id: m.tenant_id, slug: m.tenant_slug, name: m.tenant_name, selected: memberships.some((n) => n.tenant_id === selected) ? m.tenant_id === selected : i === 0,
      })),
      scopes: [
        ...scopes.map((scope) => ({ scope, description: resources.describeScope(scope) ?? scope, checked: chosen?.scopes ? chosen.scopes.includes(scope) : true })),
        ...claimScopes.map((scope) => ({ scope, description: `See your e-mail address (${user.email})`, checked: chosen?.scopes ? chosen.scopes.includes(scope) : true })),
      ],
      error,
      anotherAccount: anotherAccountHref(details),
    }));
  }

  /** The sign-in page, with its Cancel form; `entered`: the e-mail given and why it was refused. */
  function renderSignIn(ctx: Ctx, status: number, details: Details, client: ClientView, entered: { email?: string; error?: string } = {}): void {
    const base = `/oauth/interaction/${details.uid}`;
    render(ctx, status, loginPage({ action: `${base}/login`, cancel: `${base}/cancel`, csrf: csrfFor(details.uid), client, ...entered }));
  }

  /** Finishes the interaction: 303 back to the authorization endpoint (never 307: checklist A7). */
  async function finish(ctx: Ctx, result: InteractionResults, merge: boolean) {
    const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: merge });
    ctx.set(PAGE_HEADERS);
    ctx.status = 303;
    ctx.redirect(returnTo);
  }

  /**
   * Answers the client `access_denied` (RFC 6749 §4.1.2.1): the consent page's Deny, the sign-in
   * page's Cancel. Claimed first, so a replayed or concurrent answer is refused; `record`: the
   * audit record of a signed-in person's denial.
   */
  async function deny(ctx: Ctx, uid: string, description: string, record?: AuditInput) {
    if (!(await claimInteraction(db, uid))) throw new AppError('conflict', 'This request was already answered.');
    if (record) await appendAudit(db, record);
    return finish(ctx, { error: 'access_denied', error_description: description }, true);
  }

  router.use(async (ctx, next) => {
    ctx.state.route = `/oauth/interaction/:uid${/\/(login|consent|cancel)$/.exec(ctx.path)?.[0] ?? ''}`;
    try {
      await next();
    } catch (thrown) {
      const error = toAppError(thrown);
      if (error.status >= 500) log.error('interaction failed', { request_id: ctx.state.requestId, err: thrown });
      render(ctx, error.status, errorPage({ title: titleFor(error.code), message: error.expose ? error.message : 'Something went wrong on our side.', code: error.code, requestId: ctx.state.requestId }));
    }
  });

  router.get('/:uid', async (ctx) => {
    const details = await interaction(ctx);
    if (details.prompt.name === 'login') {
      // login_hint (OpenID Connect Core §3.1.2.1) only fills in the field; the password decides.
      const hint = typeof details.params.login_hint === 'string' ? details.params.login_hint.trim().slice(0, 320) : undefined;
      return renderSignIn(ctx, 200, details, await clientView(details), { email: hint });
    }
    if (details.prompt.name === 'consent') return renderConsent(ctx, details);
    throw new AppError('invalid_request', 'This sign-in step is not supported.');
  });

  router.post('/:uid/login', async (ctx) => {
    const details = await interaction(ctx);
    const form = await readForm(ctx, FORM_LIMIT);
    checkForm(ctx, details.uid, form);
    if (details.prompt.name !== 'login') throw new AppError('invalid_request', 'You are already signed in for this request.');
    // Counted under the address authenticate() looks up: a key made from the field as sent (trimmed,
    // then cut to a length) made each padding of one e-mail a counter of its own.
    const email = normaliseEmail(form.get('email') ?? '');
    const password = (form.get('password') ?? '').slice(0, 1024);
    const client = await clientView(details);
    if (email.length > MAX_EMAIL_LENGTH) return renderSignIn(ctx, 400, details, client, { error: `An e-mail address has at most ${MAX_EMAIL_LENGTH} characters.` });
    const retryAfter = loginAttempts.hit(`${ctx.ip}|${email}`);
    if (retryAfter) {
      ctx.set('Retry-After', String(retryAfter));
      return renderSignIn(ctx, 429, details, client, { email, error: `Too many sign-in attempts. Wait ${retryAfter} seconds and try again.` });
    }
    const user = email && password ? await authenticate(db, email, password) : undefined;
    if (!user) return renderSignIn(ctx, 401, details, client, { email, error: 'That email and password do not match an account.' });
    await finish(ctx, { login: { accountId: user.id, amr: ['pwd'], ts: Math.floor(Date.now() / 1000) } }, false);
  });

  router.post('/:uid/cancel', async (ctx) => {
    const details = await interaction(ctx);
    const form = await readForm(ctx, FORM_LIMIT);
    checkForm(ctx, details.uid, form);
    if (details.prompt.name !== 'login') throw new AppError('invalid_request', 'You are already signed in for this request.');
    // Not audited: nobody has signed in, so there is no person or organization whose log it belongs to.
    await deny(ctx, details.uid, 'the user cancelled the sign-in');
  });

  router.post('/:uid/consent', async (ctx) => {
    const details = await interaction(ctx);
    const form = await readForm(ctx, FORM_LIMIT);
    checkForm(ctx, details.uid, form);
    if (details.prompt.name !== 'consent') throw new AppError('invalid_request', 'This request is not waiting for your consent.');
    const accountId = details.session?.accountId;
    if (!accountId) throw new AppError('not_found', 'Your sign-in has expired. Start again from your application.');
    const decision = form.get('decision');
    if (decision === null) {
      // Enter in the form (pages.ts NO_DECISION) is not a decision: the page again, the choices kept.
      return renderConsent(ctx, details, 400, 'Choose Allow or Deny.', { tenant: form.get('tenant') ?? undefined, scopes: form.getAll('scope') });
    }
    if (decision !== 'allow' && decision !== 'deny') throw new AppError('invalid_request', 'Choose Allow or Deny.');
    const { indicator, resource } = resourceOf(details);
    const memberships = mayConnect(await membershipsOf(db, accountId), resource);
    const membership: Membership | undefined = memberships.find((m) => m.tenant_id === form.get('tenant'));
    const client = await clientView(details);
    const audit = { userId: accountId, clientId: client.id, product: resource.product, kind: 'auth' as const, requestId: ctx.state.requestId };

    if (decision === 'deny') {
      return deny(ctx, details.uid, 'the user denied the request', {
        ...audit, tenantId: membership?.tenant_id ?? null, name: 'consent.deny', args: { client_name: client.name, resource: resource.uri }, outcome: 'denied',
      });
    }

    // The tenant comes from the person's own memberships, never from the form alone (DESIGN.md §3).
    if (!form.get('tenant')) throw new AppError('invalid_request', 'Choose an organization.');
    if (!membership) throw new AppError('forbidden', resource.adminsOnly ? `You are not an administrator of that organization, and only administrators can connect ${resources.titleOf(resource)}.` : 'You are not a member of that organization.');
    const requested = requestedScopes(details, resource);
    const ticked = new Set(form.getAll('scope'));
    const allowed = requested.filter((s) => ticked.has(s));
    if (!allowed.length) {
      return renderConsent(ctx, details, 400, 'Choose at least one permission, or Deny.', { tenant: membership.tenant_id, scopes: [] });
    }
    if (!(await claimInteraction(db, details.uid))) throw new AppError('conflict', 'This request was already answered.');

    // A new grant per consent: one grant is one connection (one client, user, tenant, product).
    const grant = new provider.Grant({ accountId, clientId: client.id });
    grant.addResourceScope(indicator, allowed.join(' '));
    const refused = requested.filter((s) => !ticked.has(s));
    if (refused.length) grant.rejectResourceScope(indicator, refused.join(' '));
    const asked = String(details.params.scope ?? '').split(' ').filter(Boolean);
    // A claim scope the person unticked is refused with its claim (each releases the claim of its
    // name, auth/provider.ts CLAIMS), so nothing else can bring the claim into an ID token.
    const offered = requestedClaimScopes(details);
    const shared = offered.filter((s) => ticked.has(s));
    const withheld = CLAIM_SCOPES.filter((s) => asked.includes(s) && !shared.includes(s));
    const oidc = asked.filter((s) => OIDC_SCOPES.includes(s) || shared.includes(s));
    if (oidc.length) grant.addOIDCScope(oidc.join(' '));
    // Product scopes are also configured as OIDC scopes (notes §1.5); they belong to the resource only.
    const notOidc = asked.filter((s) => !oidc.includes(s));
    if (notOidc.length) grant.rejectOIDCScope(notOidc.join(' '));
    if (withheld.length) grant.rejectOIDCClaims(withheld);
    const claims = details.prompt.details.missingOIDCClaims;
    if (Array.isArray(claims) && claims.length) grant.addOIDCClaims((claims as string[]).filter((c) => !withheld.includes(c)));
    const grantId = await grant.save();

    try {
      await db.transaction(async (trx) => {
        // Read again under the tenant's lock: an operator may have removed the person, demoted them
        // or suspended the organization since the page was answered (db/accounts.ts lockTenant).
        await lockTenant(trx, membership.tenant_id, 'share');
        const role = await membershipIn(trx, accountId, membership.tenant_id);
        if (!role || (resource.adminsOnly && role !== 'admin')) {
          throw new AppError('forbidden', 'Your membership of that organization changed while you were answering. Start again from your application.');
        }
        const connection = await createConnection(trx, {
          grantId, tenantId: membership.tenant_id, userId: accountId, clientId: client.id, clientName: client.name,
          clientKind: client.kind, product: resource.product, resource: resource.uri, scopes: allowed,
        });
        await appendAudit(trx, {
          ...audit, tenantId: membership.tenant_id, connectionId: connection.id, name: 'consent.grant',
          args: { client_name: client.name, client_kind: client.kind, resource: resource.uri, scopes: allowed, refused: [...refused, ...withheld.filter((s) => offered.includes(s))], ...(shared.length ? { shared } : {}) }, outcome: 'ok',
        });
      });
    } catch (error) {
      await grant.destroy();
      throw error;
    }
    await finish(ctx, { consent: { grantId } }, true);
  });

  router.all('/:uid', methodNotAllowed);
  router.all('/:uid/login', methodNotAllowed);
  router.all('/:uid/consent', methodNotAllowed);
  router.all('/:uid/cancel', methodNotAllowed);

  return router.routes() as unknown as Koa.Middleware<PorticoState>;
}

async function methodNotAllowed(): Promise<void> {
  throw new AppError('method_not_allowed', 'This page does not accept that kind of request.');
}

function titleFor(code: ErrorCode): string {
  switch (code) {
    case 'csrf_failed':
      return 'Request refused';
    case 'forbidden':
      return 'Not allowed';
    case 'not_found':
      return 'Request not found';
    case 'payload_too_large':
    case 'unsupported_media_type':
    case 'invalid_request':
      return 'Invalid request';
    default:
      return 'Something went wrong';
  }
}

/** The organizations in which the person may connect this resource (administrators only, for some products). */
function mayConnect(memberships: Membership[], resource: ProtectedResource): Membership[] {
  return resource.adminsOnly ? memberships.filter((m) => m.role === 'admin') : memberships;
}
