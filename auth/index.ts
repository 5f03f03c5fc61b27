/**
 * The OAuth 2.1 authorization server (issue 3), mounted into the composition root's Koa app.
 *
 * Layout B of the notes (§1.1): the issuer is `{auth_url}` itself and every endpoint is under
 * /oauth, so RFC 8414 metadata is served natively at /.well-known/oauth-authorization-server.
 * The Provider is a Koa app; its middleware runs on the parent's context (what koa-mount does at
 * '/'), and requests it does not claim fall through to the rest of Portico.
 */
import { createHash } from 'node:crypto';
import type Koa from 'koa';
import Provider from 'oidc-provider';
import type { Mount, PorticoContext } from '../app.js';
import { hashTokenId } from '../db/grant_store.js';
import type { Catalog } from '../shared/catalog.js';
import type { EventBus } from '../shared/events.js';
import type { PorticoState } from '../shared/http.js';
import { MAX_METADATA_BYTES } from './clients.js';
import { purgeExpired, purgeUnusedClients } from './adapter.js';
import { interactionRoutes } from './interactions.js';
import { instanceKeysOf, loadOrCreateSigningKeys, providerJwks, sameKeys, SIGNING_KEYS } from './keys.js';
import { COOKIE_KEYS, keysInOrder, readRingLocked } from '../db/secrets.js';
import { dialectOf } from '../db/connect.js';
import { describeInstance, liveInstances, registerInstance } from '../db/instances.js';
import { errorReturns } from './error_return.js';
import { PAGE_HEADERS, pageCsp } from './pages.js';
import { createProvider, guardCodeResource, routedPath, ROUTES } from './provider.js';
import { forgetAnswers, refreshRepeats } from './refresh_repeat.js';
import { offWhenIdle, providerStorage } from './provider_storage.js';
import { WindowLimiter } from './rate_limit.js';
import { ResourceRegistry } from './resources.js';
import { endExpiredGrants, reasonOf, revokeGrant } from './revocation.js';

export interface AuthMountOptions {
  catalog: Catalog;
  events: EventBus;
  /** Grace window for a rotated refresh token (default 10 s); tests shorten it. */
  refreshReuseGraceMs?: number;
  /** Dynamic registrations accepted per client IP and minute (default 20). */
  registrationsPerMinute?: number;
  /** Client ID metadata documents fetched per client IP and minute (default 20). */
  metadataFetchesPerMinute?: number;
  /** Tests only: the fetch used for client ID metadata documents (the default refuses private and loopback addresses). */
  fetch?: typeof globalThis.fetch;
  /** How often expired rows are deleted (default 10 min). */
  purgeIntervalMs?: number;
}

export function authMount(options: AuthMountOptions): Mount {
  return async (app, context) => {
    const { db, log } = context;
    const resources = new ResourceRegistry(options.catalog, context.config);
    const signing = await loadOrCreateSigningKeys(db);
    const refreshReuseGraceMs = options.refreshReuseGraceMs ?? 10_000;
    const provider = createProvider(context, resources, providerJwks(signing), { refreshReuseGraceMs, fetch: options.fetch, metadataFetchesPerMinute: options.metadataFetchesPerMinute ?? 20 });
    if (!(await guardCodeResource(provider, resources))) log.warn('this oidc-provider keeps its grant handlers elsewhere: a code exchange naming a resource the code was not issued for spends the code');

    // Work started by provider events (which do not await listeners) finishes before the response
    // leaves: a client that saw its refresh refused also sees its connection revoked.
    const pending = new WeakMap<object, Promise<void>[]>();
    const track = (ctx: object, work: Promise<void>, failure = 'grant revocation failed') => {
      const guarded = work.catch((err) => log.error(failure, { err }));
      pending.set(ctx, [...(pending.get(ctx) ?? []), guarded]);
    };
    const requestIdOf = (ctx: { state?: Partial<PorticoState> }) => ctx.state?.requestId;

    provider.on('grant.revoked', (ctx: Koa.Context & { oidc?: { route?: string; params?: Record<string, unknown> } }, grantId: string) => {
      track(ctx, revokeGrant(db, options.events, grantId, reasonOf(ctx.oidc?.route, ctx.oidc?.params?.grant_type), requestIdOf(ctx)));
    });
    // One access token revoked at /oauth/revoke: every instance forgets it (the MCP hosts cache
    // principals) and closes the GET streams it opened, before the answer leaves, as for a grant.
    // Should the event not reach them, their revocation sweep finds the token gone within a second.
    provider.on('access_token.destroyed', (token: { jti: string }) => {
      const announced = options.events.publish({ type: 'token.revoked', tokenId: hashTokenId(token.jti) });
      const ctx = (Provider as unknown as { ctx?: object }).ctx;
      if (ctx) track(ctx, announced, 'token revocation event failed');
      else announced.catch((err) => log.error('token revocation event failed', { err }));
    });
    // A wrong PKCE verifier means someone holds a code they cannot use: the code, and the grant
    // it would have started, die (checklist B3: "either way the code must then be dead").
    provider.on('grant.error', (ctx: Koa.Context & { oidc?: { params?: Record<string, unknown> } }, error: { error?: string; cause?: unknown }) => {
      const params = ctx.oidc?.params;
      const cause = error.cause instanceof Error ? error.cause.message : '';
      if (params?.grant_type !== 'authorization_code' || error.error !== 'invalid_grant' || !/code_verifier/.test(cause) || typeof params.code !== 'string') return;
      const code = params.code;
      track(ctx, (async () => {
        const row = await db('oidc_payloads').where({ model: 'AuthorizationCode', id: hashTokenId(code) }).first('grant_id');
        if (row?.grant_id) await revokeGrant(db, options.events, row.grant_id, 'pkce_verification_failed', requestIdOf(ctx));
      })());
    });
    provider.on('server_error', (ctx: { state?: Partial<PorticoState> }, err: unknown) => log.error('oauth server error', { request_id: requestIdOf(ctx), err }));
    // LOG_LEVEL=debug: why oidc-provider refused a request. Its error_detail says more than the
    // answer a client gets ("invalid_grant" alone), and an operator asked why a client cannot
    // connect needs it. Only the error's own words and the client's id, never another parameter's value.
    type RefusedContext = { state?: Partial<PorticoState>; oidc?: { route?: string; client?: { clientId: string }; params?: Record<string, unknown> } };
    // The provider's typings name each event's listener apart; these all share one shape.
    const onRefusal = provider.on.bind(provider) as (event: string, listener: (ctx: RefusedContext, error: OAuthRefusal) => void) => void;
    for (const event of OAUTH_REFUSALS) {
      onRefusal(event, (ctx, error) => {
        const named = ctx.oidc?.params?.client_id;
        log.debug('oauth refused', {
          request_id: requestIdOf(ctx), route: ctx.oidc?.route, error: error.error ?? error.name, description: error.error_description, detail: error.error_detail,
          client_id: ctx.oidc?.client?.clientId ?? (typeof named === 'string' ? named.slice(0, 300) : undefined),
        });
      });
    }
    // A body streamed without Content-Length past oidc-provider's own read cap fails its parse
    // ("failed to parse the request body", 400): noted, so registrationGuard and formBodyGuard
    // answer it as the oversized body it is (413), like a declared one (docs/auth.md).
    const overRead = new WeakSet<object>();
    const noteOverRead = (ctx: object, error: { cause?: unknown }) => {
      if (error.cause instanceof Error && error.cause.message === 'request entity too large') overRead.add(ctx);
    };
    provider.on('registration_create.error', noteOverRead);
    provider.on('grant.error', noteOverRead);
    provider.on('revocation.error', noteOverRead);
    provider.on('introspection.error', noteOverRead);

    provider.use(async (ctx, next) => {
      await next();
      await Promise.all(pending.get(ctx) ?? []);
      pending.delete(ctx);
      const route = (ctx as { oidc?: { route?: string } }).oidc?.route;
      if (route) (ctx.state as PorticoState).route = `oauth.${route}`;
      // oidc-provider's own auto-submitting pages (form_post, the account-switch step of resume)
      // get the page headers too; their one inline script is allowed by its hash.
      if (typeof ctx.body === 'string' && ctx.response.is('html') && !ctx.response.get('Content-Security-Policy')) {
        const scripts = [...ctx.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => `'sha256-${createHash('sha256').update(m[1]).digest('base64')}'`);
        ctx.set({ ...PAGE_HEADERS, 'Content-Security-Policy': pageCsp(scripts) });
      }
      // The catalog decides at each request which products are live (midas ships later).
      if (route === 'discovery' && ctx.body && typeof ctx.body === 'object') {
        const body = ctx.body as Record<string, unknown>;
        // RFC 8414 §2: omitted, these default to client_secret_basic, which no self-registered
        // client has; oidc-provider takes the token endpoint's methods at both.
        const methods = body.token_endpoint_auth_methods_supported;
        ctx.body = { ...body, scopes_supported: resources.liveScopes(), revocation_endpoint_auth_methods_supported: methods, introspection_endpoint_auth_methods_supported: methods };
      }
    });

    provider.use(refreshRepeats(db, refreshReuseGraceMs, log));

    const dispatch = compose(provider.middleware as Koa.Middleware[]);
    app.use(registrationGuard(context, options.registrationsPerMinute ?? 20, (ctx) => overRead.has(ctx)));
    app.use(methodGuard);
    app.use(formBodyGuard((ctx) => overRead.has(ctx)));
    app.use(interactionRoutes(provider, context, resources));
    app.use(errorReturns(provider));
    // The provider's per-request context is switched off between its requests (provider_storage.ts).
    const whileProviderWorks = offWhenIdle(await providerStorage());
    // Whether its cookies are Secure is the request's (ctx.secure), which app.ts marks by the public URL.
    app.use((ctx, next) => whileProviderWorks(() => dispatch(ctx, next)));

    let purging = false;
    const timer = setInterval(() => {
      // One run at a time: a run slower than the interval (waiting on rows calls hold) is not joined
      // by the next, which would only wait on the same rows.
      if (purging) return;
      purging = true;
      // Expired grants end their connections first (the purge would delete the grants' rows). One
      // instant for both steps: a grant that expires while the first runs (it can wait on a
      // connection row a call holds) is left to the next run, not deleted with its connection live.
      const now = Date.now();
      endExpiredGrants(db, options.events, now)
        .then(() => Promise.all([purgeExpired(db, now), purgeUnusedClients(db), forgetAnswers(db, refreshReuseGraceMs, now)]))
        .catch((err) => log.warn('purging expired OAuth rows failed', { err }))
        .finally(() => (purging = false));
    }, options.purgeIntervalMs ?? 10 * 60_000);
    timer.unref();
    context.onClose(() => clearInterval(timer));

    // SQLite serves one instance (docs/performance.md): a second one on the same file works, but
    // learns of revocations only through the events file and its sweep, and shares the one writer.
    if (dialectOf(db) === 'sqlite') {
      const others = await liveInstances(db);
      if (others.length) log.warn('another instance is running on this SQLite file; SQLite serves one instance, use PostgreSQL to run several', { instances: others.map(describeInstance) });
    }
    // The keys this instance took up, for the keys commands (db/instances.ts, auth/admin.ts).
    const keys = instanceKeysOf(signing, context.secrets.cookieKeys);
    const instance = await registerInstance(db, keys, (err) => log.warn('marking this instance as running failed', { err }), undefined, async (trx) => {
      // The rings as stored now, read under the lock a keys step takes: a step that committed since
      // this instance read its keys did not see it, so it must not run.
      const [signingNow, cookiesNow] = [await readRingLocked(trx, SIGNING_KEYS), await readRingLocked(trx, COOKIE_KEYS)];
      if (!signingNow || !cookiesNow || !sameKeys(instanceKeysOf(signingNow, keysInOrder(cookiesNow)), keys)) {
        throw new Error('the stored keys changed while this instance started (a keys command ran): start it again');
      }
    });
    context.onClose(() => instance.close().catch((err) => log.warn('removing this instance from the running ones failed', { err })));
  };
}

/**
 * Dynamic registration is open (MCP clients register themselves), so it is bounded: CORS for
 * browser-based clients (oidc-provider has none on this route, notes §5.9), a per-IP rate limit
 * and a body cap (checklist H1). Answers use the OAuth error shape of the endpoint (RFC 7591 §3.2.2).
 */
function registrationGuard(context: PorticoContext, perMinute: number, overRead: (ctx: object) => boolean): Koa.Middleware<PorticoState> {
  const limiter = new WindowLimiter(perMinute, 60_000);
  return async (ctx, next) => {
    const path = routedPath(ctx.path);
    if (path !== ROUTES.registration && !path.startsWith(`${ROUTES.registration}/`)) return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Access-Control-Expose-Headers', 'Retry-After');
    if (ctx.method === 'OPTIONS') {
      ctx.set('Access-Control-Allow-Methods', 'GET, POST');
      ctx.set('Access-Control-Allow-Headers', 'Content-Type, Authorization');
      ctx.set('Access-Control-Max-Age', '600');
      ctx.status = 204;
      return;
    }
    if (ctx.method !== 'POST' || path !== ROUTES.registration) return next();
    ctx.state.route = 'oauth.registration';
    const retryAfter = limiter.hit(ctx.ip);
    if (retryAfter) {
      context.log.warn('registration rate limited', { request_id: ctx.state.requestId, ip: ctx.ip });
      ctx.status = 429;
      ctx.set('Retry-After', String(retryAfter));
      ctx.set('Cache-Control', 'no-store');
      ctx.body = { error: 'rate_limited', error_description: `too many registrations from this address; retry in ${retryAfter} s`, request_id: ctx.state.requestId };
      return;
    }
    const tooLarge = () => {
      ctx.status = 413;
      ctx.set('Cache-Control', 'no-store');
      ctx.set('Connection', 'close');
      ctx.body = { error: 'payload_too_large', error_description: `client metadata must be at most ${MAX_METADATA_BYTES} bytes`, request_id: ctx.state.requestId };
    };
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > MAX_METADATA_BYTES) return tooLarge();
    await next();
    if (overRead(ctx)) tooLarge();
  };
}

/** oidc-provider's events for a request it refused (its error handler's, per endpoint), logged at debug. */
const OAUTH_REFUSALS = [
  'authorization.error', 'grant.error', 'registration_create.error', 'registration_read.error',
  'revocation.error', 'introspection.error', 'userinfo.error', 'end_session.error',
] as const;
/** What oidc-provider's errors carry: the code a client gets, its description, and its detail for the operator. */
interface OAuthRefusal { name?: string; error?: string; error_description?: string; error_detail?: string }

/** oidc-provider's own cap on a request body (lib/shared/selective_body.js). */
const PROVIDER_BODY_LIMIT = 56 * 1024;
const FORM_ENDPOINTS = new Set<string>([ROUTES.token, ROUTES.revocation, ROUTES.introspection]);

/** The provider's discovery documents (RFC 8414 §3, OpenID Connect Discovery 1.0 §4), at the issuer's root. */
const DISCOVERY = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

/**
 * The methods each of the provider's fixed endpoints answers; another method is 405 with `Allow`,
 * not a 404. OPTIONS is the CORS preflight, which oidc-provider answers at every endpoint a browser
 * script may call; methodGuard answers any other OPTIONS with the list.
 */
const ENDPOINT_METHODS = new Map<string, string[]>([
  [ROUTES.token, ['POST', 'OPTIONS']],
  [ROUTES.revocation, ['POST', 'OPTIONS']],
  [ROUTES.introspection, ['POST', 'OPTIONS']],
  [ROUTES.registration, ['POST', 'OPTIONS']],
  // GET only: oidc-provider answers POST here only with enableHttpPostMethods, which Portico leaves
  // off (a cross-site POST carries no SameSite=Lax session cookie); a POST was a 404 "no route".
  [ROUTES.authorization, ['GET']],
  [ROUTES.jwks, ['GET', 'HEAD', 'OPTIONS']],
  ...DISCOVERY.map((path): [string, string[]] => [path, ['GET', 'HEAD', 'OPTIONS']]),
]);

/**
 * The provider's endpoints whose answers oidc-provider makes readable by browser scripts (the
 * registration endpoint's CORS is registrationGuard's). The authorization endpoint is a page a
 * browser navigates to, and has none.
 */
const CORS_ENDPOINTS = new Set<string>([ROUTES.token, ROUTES.revocation, ROUTES.introspection, ROUTES.jwks, ...DISCOVERY]);

/**
 * A refusal of Portico's own at one of CORS_ENDPOINTS is readable where the provider's answers
 * are, or a browser-based client cannot tell why it failed. No client is known yet, so from any
 * origin, as oidc-provider answers before it knows the client (lib/shared/cors.js).
 */
function readableByScripts(ctx: Koa.Context): void {
  if (!CORS_ENDPOINTS.has(routedPath(ctx.path))) return;
  ctx.vary('Origin');
  ctx.set('Access-Control-Allow-Origin', ctx.get('origin') || '*');
}

const methodGuard: Koa.Middleware<PorticoState> = async (ctx, next) => {
  const allowed = ENDPOINT_METHODS.get(routedPath(ctx.path));
  if (ctx.method === 'OPTIONS' && allowed?.includes('OPTIONS') && !(ctx.get('origin') && ctx.get('access-control-request-method'))) {
    // Not a preflight, which oidc-provider passes on to a bare 404 "Not Found" (RFC 9110 §9.3.7).
    ctx.status = 204;
    ctx.set('Allow', allowed.join(', '));
    return;
  }
  if (!allowed || allowed.includes(ctx.method) || (ctx.method === 'HEAD' && allowed.includes('GET'))) return next();
  readableByScripts(ctx);
  ctx.status = 405;
  ctx.set('Allow', allowed.join(', '));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = { error: 'method_not_allowed', error_description: `${ctx.method} is not supported here; use ${allowed.filter((m) => m !== 'OPTIONS').join(' or ')}`, request_id: ctx.state.requestId };
};

/**
 * A body over oidc-provider's cap at the token, revocation and introspection endpoints is answered
 * 413 payload_too_large (DESIGN.md §7), as everywhere else, whether declared in Content-Length
 * (refused unread) or streamed without it (`overRead`: the provider read up to its cap): the
 * provider would call it "failed to parse the request body" (400).
 */
function formBodyGuard(overRead: (ctx: object) => boolean): Koa.Middleware<PorticoState> {
  const tooLarge = (ctx: Koa.ParameterizedContext<PorticoState>) => {
    readableByScripts(ctx);
    ctx.status = 413;
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Connection', 'close');
    ctx.body = { error: 'payload_too_large', error_description: `request bodies here are at most ${PROVIDER_BODY_LIMIT} bytes`, request_id: ctx.state.requestId };
  };
  return async (ctx, next) => {
    if (ctx.method !== 'POST' || !FORM_ENDPOINTS.has(routedPath(ctx.path))) return next();
    if (Number(ctx.get('content-length') || 0) > PROVIDER_BODY_LIMIT) return tooLarge(ctx);
    await next();
    if (overRead(ctx)) tooLarge(ctx);
  };
}

/** Runs a middleware list on the given context, then `next` (koa-compose, which koa-mount uses). */
function compose(middleware: Koa.Middleware[]): (ctx: Koa.Context, next: Koa.Next) => Promise<void> {
  return (ctx, next) => {
    let last = -1;
    const dispatch = async (i: number): Promise<void> => {
      if (i <= last) throw new Error('next() called multiple times');
      last = i;
      const fn = i === middleware.length ? next : middleware[i];
      if (!fn) return;
      await fn(ctx, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
