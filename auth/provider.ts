/**
 * The oidc-provider configuration: OAuth 2.1 (code + PKCE S256 only), product-scoped opaque
 * tokens bound to one resource, public clients with rotating refresh tokens. Every choice is
 * explained in docs/auth.md; the recipe and its pitfalls are ../shared/reference/oidc-provider-notes.md.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { PorticoContext } from '../app.js';
import { findEnabledUserById } from '../db/accounts.js';
import { findConnectionByGrant } from '../db/grant_store.js';
import { knexAdapter } from './adapter.js';
import { CLIENT_DEFAULTS, clientKindOf, DYNAMIC_PREFIX, extraClientMetadata, newClientId } from './clients.js';
import type { PrivateJwks } from './keys.js';
import { TTL } from './lifetimes.js';
import { errorPage, PAGE_HEADERS } from './pages.js';
import { WindowLimiter } from './rate_limit.js';
import { CLAIM_SCOPES, OIDC_SCOPES, type ResourceRegistry } from './resources.js';

export interface ProviderOptions {
  refreshReuseGraceMs: number;
  /** Replaces the fetch used for client ID metadata documents (tests only). */
  fetch?: typeof globalThis.fetch;
  /** Client ID metadata documents fetched per client IP and minute. */
  metadataFetchesPerMinute: number;
}

export const ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  introspection: '/oauth/introspect',
  jwks: '/oauth/jwks',
  userinfo: '/oauth/userinfo',
  end_session: '/oauth/logout',
  pushed_authorization_request: '/oauth/par',
  device_authorization: '/oauth/device/auth',
  code_verification: '/oauth/device',
  backchannel_authentication: '/oauth/backchannel',
  challenge: '/oauth/challenge',
  credential: '/oauth/credential',
} as const;

/**
 * The path oidc-provider's router takes a request's path for (lib/helpers/router.js fold, match):
 * ASCII letters match in either case and one trailing slash is dropped, so /OAUTH/Register/ is the
 * registration endpoint. Portico's guards in front of the provider compare this with ROUTES (all
 * lower case), never the path as sent: another spelling passed them and reached the endpoint unguarded.
 */
export function routedPath(path: string): string {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/** The claims and the scopes that release them (each a scope oidc-provider supports; CLAIM_SCOPES in resources.ts names the ones besides openid). */
const CLAIMS = { openid: ['sub'], email: ['email'] };

export function createProvider(context: PorticoContext, resources: ResourceRegistry, jwks: PrivateJwks, options: ProviderOptions): Provider {
  const { config, db, secrets } = context;

  const configuration: Configuration = {
    adapter: knexAdapter(db, { refreshReuseGraceMs: options.refreshReuseGraceMs }),
    jwks: jwks as Configuration['jwks'],
    cookies: {
      keys: secrets.cookieKeys,
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    routes: ROUTES,
    responseTypes: ['code'],
    // OAuth 2.1 §4.1.1 / RFC 9700 §2.1.1: PKCE for every client; v9 supports S256 only.
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: CLIENT_DEFAULTS,
    // Every product's scopes, live or not: registration validates a client's `scope` against this
    // list (notes §1.5), and a product may go live while we run. Discovery shows live ones only.
    scopes: resources.allScopes(),
    claims: CLAIMS,
    // Every scope oidc-provider supports: its claims' scopes (email) are ones too.
    extraClientMetadata: extraClientMetadata([...new Set([...resources.allScopes(), ...Object.keys(CLAIMS)])]),
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true, initialAccessToken: false, idFactory: () => newClientId(DYNAMIC_PREFIX) },
      revocation: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      introspection: { enabled: true, allowedPolicy: async (_ctx, client, token) => token.clientId === client.clientId },
      dPoP: { enabled: false },
      clientCredentials: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02', allowFetch: boundedFetches(context, options.metadataFetchesPerMinute), cacheDuration: { min: 60, max: 3600 } },
      resourceIndicators: {
        enabled: true,
        getResourceServerInfo: async (ctx, indicator) => {
          // One grant covers one product (DESIGN.md §4): several resources in one request are refused.
          if (Array.isArray(ctx.oidc.params?.resource) && (ctx.oidc.params.resource as unknown[]).length > 1) {
            throw new errors.InvalidTarget('request exactly one resource: each product is connected separately');
          }
          const resource = resources.resolve(indicator);
          if (!resource) throw new errors.InvalidTarget(`unknown resource ${indicator}: expected a live product server URL such as ${resources.uriOf('forge')}`);
          if (ctx.oidc.route === 'authorization') {
            const requested = String(ctx.oidc.params?.scope ?? '').split(' ').filter(Boolean);
            const named = requested.filter((scope) => !OIDC_SCOPES.includes(scope) && !CLAIM_SCOPES.includes(scope));
            // A request that names the resource but none of the scopes that name a resource (no scope,
            // or only `openid`, `offline_access`, `email`) asks for everything the resource offers; the
            // person can untick on the consent page. A client that adds `offline_access` whenever the
            // server advertises it asks for it alone where a roadmap product's challenge names no scope.
            if (!named.length) ctx.oidc.params!.scope = [...requested, ...resource.scopes].join(' ');
            // Scopes of another product only: the consent page would offer nothing to grant.
            else if (!named.some((scope) => resource.scopes.includes(scope))) {
              throw new errors.InvalidScope(`none of the requested scopes belong to ${resource.uri}; it offers ${resource.scopes.join(' ')}`, requested.join(' '));
            }
          }
          return { scope: resource.scopes.join(' '), audience: resource.uri, accessTokenTTL: TTL.AccessToken, accessTokenFormat: 'opaque' };
        },
        defaultResource: async (ctx, _client, oneOf) => {
          if (oneOf) {
            if (oneOf.length === 1) return oneOf[0];
            throw new errors.InvalidTarget('several resources were granted: name one with the resource parameter');
          }
          const scope = typeof ctx.oidc.params?.scope === 'string' ? ctx.oidc.params.scope : '';
          const implied = resources.impliedBy(scope.split(' '));
          if (implied.resource) return implied.resource.uri;
          throw new errors.InvalidTarget(
            implied.products.length > 1
              ? 'the requested scopes belong to more than one product: request one resource (RFC 8707) per connection'
              : 'no resource requested: pass resource=<product server URL> or the scopes of exactly one live product',
          );
        },
        useGrantedResource: async () => true,
      },
    },
    // Public clients get refresh tokens without offline_access (MCP clients rarely ask for it),
    // and tokens do not die with the browser session at the authorization server (notes §1.7).
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: (ctx) => rotateRefreshToken(ctx, resources),
    expiresWithSession: async () => false,
    // Code replay, refresh-token reuse and refresh-token revocation revoke the whole grant (RFC 9700
    // §4.14, OAuth 2.1 §4.1.3); revoking only an access token does not.
    revokeGrantPolicy: (ctx) => !(ctx.oidc.route === 'revocation' && ctx.oidc.entities.AccessToken),
    loadExistingGrant: async (ctx) => {
      const consented = ctx.oidc.result?.consent?.grantId;
      if (consented) return ctx.oidc.provider.Grant.find(consented);
      // Self-registered and metadata-document clients are asked every time (checklist G1); an
      // administrator's client may reuse the live grant this browser session already holds.
      const clientId = ctx.oidc.client!.clientId;
      if (clientKindOf(clientId) !== 'registered') return undefined;
      const grantId = ctx.oidc.session?.grantIdFor(clientId);
      if (!grantId) return undefined;
      const connection = await findConnectionByGrant(db, grantId);
      if (!connection || connection.revoked_at) return undefined;
      const grant = await ctx.oidc.provider.Grant.find(grantId);
      if (!grant) return undefined;
      // For the same resource and scopes only: a scope of its resource that the person unticked (or
      // was not asked for) makes the person answer again, as a step-up must; the old grant would
      // answer for them (access_denied, or less than was asked) without showing anything.
      const asked = new Set(String(ctx.oidc.params?.scope ?? '').split(' '));
      for (const indicator of Object.keys(grant.resources ?? {})) {
        const held = new Set(grant.getResourceScope(indicator).split(' '));
        if (resources.resolve(indicator)?.scopes.some((scope) => asked.has(scope) && !held.has(scope))) return undefined;
      }
      return grant;
    },
    ttl: {
      // Never past the grant's end (README: a connection lasts 90 days, then ends as a revocation
      // does): a token issued in the grant's last hour would otherwise work up to an hour longer
      // than its connection (until the purge ended it); the resource servers check only `exp`.
      AccessToken: (ctx, token) => {
        const ttl = token.resourceServer?.accessTokenTTL ?? TTL.AccessToken;
        const grant = ctx?.oidc?.entities?.Grant as { exp?: number; remainingTTL?: number } | undefined;
        return typeof grant?.exp === 'number' && typeof grant.remainingTTL === 'number' ? Math.max(1, Math.min(ttl, grant.remainingTTL)) : ttl;
      },
      AuthorizationCode: TTL.AuthorizationCode,
      Interaction: TTL.Interaction,
      Session: TTL.Session,
      Grant: TTL.Grant,
      IdToken: TTL.IdToken,
      RefreshToken: TTL.RefreshToken,
      RegistrationAccessToken: TTL.RegistrationAccessToken,
    },
    extraTokenClaims: async (_ctx, token) => {
      if (!('grantId' in token) || !token.grantId) return undefined;
      const connection = await findConnectionByGrant(db, token.grantId);
      return connection ? { tenant_id: connection.tenant_id } : undefined;
    },
    // A disabled account has none: oidc-provider then refuses its codes, refreshes and sessions.
    findAccount: async (_ctx, sub) => {
      const user = await findEnabledUserById(db, sub);
      if (!user) return undefined;
      return { accountId: user.id, claims: async () => ({ sub: user.id, email: user.email }) };
    },
    interactions: { url: (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    // Browser clients may call the token, revocation and introspection endpoints from the origin of
    // one of their redirect URIs (loopback ports ignored for native clients).
    clientBasedCORS: (_ctx, origin, client) => {
      if (origin === 'null' || client.clientAuthMethod !== 'none') return false;
      return client.redirectUris!.some((uri) => {
        const url = URL.parse(uri);
        if (!url) return false;
        if (url.origin === origin) return true;
        const from = URL.parse(origin);
        return client.applicationType === 'native' && url.protocol === 'http:' && from?.protocol === 'http:' && from.hostname === url.hostname;
      });
    },
    renderError: async (ctx: KoaContextWithOIDC, out, error) => {
      ctx.set(PAGE_HEADERS);
      ctx.type = 'html';
      const code = String(out.error ?? 'invalid_request');
      ctx.body = errorPage({
        title: 'This request cannot continue',
        message: (error as { expose?: boolean }).expose === false ? 'Something went wrong on our side.' : String(out.error_description ?? code),
        code,
        requestId: (ctx.state as { requestId?: string }).requestId,
      });
    },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  };

  const provider = new Provider(config.authUrl, configuration);
  provider.proxy = config.trustProxy > 0;
  provider.maxIpsCount = config.trustProxy;
  revokeOnlyTheAccessToken(provider);
  return provider;
}

/**
 * RFC 7009 at /oauth/revoke with an access token revokes that token only (docs/auth.md: revoking a
 * refresh token ends the connection, revoking an access token does not; revokeGrantPolicy above).
 * oidc-provider's revoke helper (lib/helpers/revoke.js) nevertheless revokes every token of the
 * grant by grant id while it keeps the grant: the refresh token and the access token of the last
 * refresh died with it, and the connection, still listed as live and never audited as revoked,
 * could not be used by anything. While that request runs, the by-grant revocations do nothing;
 * the token itself is destroyed (and announced, `access_token.destroyed`) as before.
 */
function revokeOnlyTheAccessToken(provider: Provider): void {
  const revokingOneAccessToken = () => {
    const ctx = (Provider as unknown as { ctx?: KoaContextWithOIDC }).ctx;
    return ctx?.oidc?.route === 'revocation' && Boolean(ctx.oidc.entities?.AccessToken);
  };
  for (const model of [provider.AccessToken, provider.RefreshToken, provider.AuthorizationCode] as Array<{ revokeByGrantId(grantId: string): Promise<void> }>) {
    const revokeByGrantId = model.revokeByGrantId.bind(model);
    model.revokeByGrantId = async (grantId: string) => {
      if (revokingOneAccessToken()) return;
      return revokeByGrantId(grantId);
    };
  }
}

/**
 * oidc-provider consumes a rotated refresh token before it resolves the requested resource
 * (lib/actions/grants/refresh_token.js): a refresh asking for a resource its grant does not hold
 * was refused with `invalid_target` but cost the client its refresh token, and the client's next,
 * correct refresh looked like reuse and revoked the connection. This hook runs before the
 * consume, so such a request is refused here with nothing spent. Otherwise the provider's default
 * rotation: public clients' tokens on every use, others' past 70 % of their life, none after a year.
 */
function rotateRefreshToken(ctx: KoaContextWithOIDC, resources: ResourceRegistry): boolean {
  const refreshToken = ctx.oidc.entities.RefreshToken!;
  const requested = ctx.oidc.params?.resource as string | string[] | undefined;
  if (requested !== undefined) {
    const indicators = [requested].flat();
    if (indicators.length !== 1) throw new errors.InvalidTarget('request exactly one resource: each product is connected separately');
    const granted = grantedSpelling(indicators[0], refreshToken.resourceIndicators, resources);
    if (!granted) throw new errors.InvalidTarget('the refresh token was not issued for this resource');
    // oidc-provider compares the spelling the grant holds (resolve_resource.js).
    ctx.oidc.params!.resource = granted;
  }
  if (refreshToken.totalLifetime() >= 365.25 * 24 * 3600) return false;
  if (ctx.oidc.client!.clientAuthMethod === 'none' && !refreshToken.isSenderConstrained()) return true;
  return refreshToken.ttlPercentagePassed() >= 70;
}

/**
 * The spelling under which a code or refresh token holds the resource `requested` names. The
 * authorization endpoint accepts any spelling of a resource that resolves to it (a trailing
 * slash, an upper-case scheme or host, another URL of the console API: docs/auth.md) and the
 * grant keeps the one it was given, so the token endpoint compares the resources they name: a
 * client that authorized `…/forge/` and refreshes with `…/forge` (the protected resource
 * metadata's `resource`), or the other way round, names the same resource. Undefined when the
 * token holds no such resource.
 */
function grantedSpelling(requested: string, granted: Set<string | undefined>, resources: ResourceRegistry): string | undefined {
  if (typeof requested !== 'string') return undefined;
  if (granted.has(requested)) return requested;
  const uri = resources.resolve(requested)?.uri;
  if (!uri) return undefined;
  return [...granted].find((indicator): indicator is string => typeof indicator === 'string' && resources.resolve(indicator)?.uri === uri);
}

/**
 * A client ID metadata document that is not cached is fetched from wherever its client_id points,
 * for anyone who sends one (twice when the fetch fails: the authorization endpoint looks the client
 * up again to report the error). So fetches are bounded per address, as registrations are
 * (docs/auth.md, "registration abuse"); a document served from the cache is not fetched, nor counted.
 */
function boundedFetches(context: PorticoContext, perMinute: number) {
  const limiter = new WindowLimiter(perMinute, 60_000);
  return async (ctx: KoaContextWithOIDC | undefined): Promise<boolean> => {
    if (!ctx) return true;
    const retryAfter = limiter.hit(ctx.ip);
    if (!retryAfter) return true;
    // Once a window: a refused authorization request asks twice.
    if (limiter.firstRefused(ctx.ip)) context.log.warn('client metadata document fetches rate limited', { request_id: (ctx.state as { requestId?: string }).requestId, ip: ctx.ip });
    ctx.set('Retry-After', String(retryAfter));
    const error = new errors.CustomOIDCProviderError('rate_limited', `too many client metadata documents fetched for this address; retry in ${retryAfter} s`);
    throw Object.assign(error, { status: 429, statusCode: 429 });
  };
}

/** Not part of oidc-provider's API: the module that keeps each provider's internals (its grant handlers), looked up at start. */
const PROVIDER_INTERNALS = 'oidc-provider/lib/helpers/weak_cache.js';

/**
 * oidc-provider's authorization_code grant consumes the code before it resolves the requested
 * `resource` (grant_common.js issueTokens): an exchange naming a resource the grant does not hold
 * was refused with `invalid_target` but spent the code, and the client's corrected retry looked
 * like code replay and revoked the connection. This check runs before the provider's handler, for
 * a live, unconsumed code of this client only (a consumed one still goes to replay detection).
 * Returns false, and changes nothing, if this version of oidc-provider keeps its handlers elsewhere.
 */
export async function guardCodeResource(provider: Provider, resources: ResourceRegistry): Promise<boolean> {
  type Handler = (ctx: KoaContextWithOIDC) => Promise<void>;
  let handlers: Map<string, Handler> | undefined;
  try {
    const internals = ((await import(PROVIDER_INTERNALS)) as { default: (p: Provider) => { grantTypeHandlers?: unknown } | undefined }).default(provider);
    if (internals?.grantTypeHandlers instanceof Map) handlers = internals.grantTypeHandlers as Map<string, Handler>;
  } catch {
    // not found where it is looked for: unguarded
  }
  const original = handlers?.get('authorization_code');
  if (!handlers || !original) return false;
  handlers.set('authorization_code', async (ctx) => {
    const requested = ctx.oidc.params?.resource as string | string[] | undefined;
    const value = ctx.oidc.params?.code;
    if (requested !== undefined && typeof value === 'string') {
      const code = await ctx.oidc.provider.AuthorizationCode.find(value, { ignoreExpiration: true });
      // Only an exchange that would otherwise succeed is refused here: one with a wrong or missing
      // code_verifier, or another redirect_uri, goes to oidc-provider, which refuses it with
      // invalid_grant (and the code dies, checklist B3), and tells nothing about the code's resource.
      if (code && !(code as { consumed?: unknown }).consumed && !code.isExpired && code.clientId === ctx.oidc.client?.clientId
        && code.redirectUri === redirectUriOf(ctx) && verifierMatches(ctx.oidc.params?.code_verifier, code.codeChallenge, code.codeChallengeMethod)) {
        const indicators = [requested].flat();
        if (indicators.length !== 1) throw new errors.InvalidTarget('request exactly one resource: each product is connected separately');
        const granted = grantedSpelling(indicators[0], code.resourceIndicators, resources);
        if (!granted) throw new errors.InvalidTarget('the authorization code was not issued for this resource');
        ctx.oidc.params!.resource = granted;
      }
    }
    return original(ctx);
  });
  return true;
}

/** Whether `verifier` is the S256 verifier of `challenge` (what oidc-provider's checkPKCE accepts). */
function verifierMatches(verifier: unknown, challenge: unknown, method: unknown): boolean {
  if (typeof verifier !== 'string' || typeof challenge !== 'string' || method !== 'S256') return false;
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return false;
  const expected = Buffer.from(createHash('sha256').update(verifier).digest('base64url'));
  const given = Buffer.from(challenge);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

/** The redirect_uri of a code exchange as oidc-provider takes it (allowOmittingSingleRegisteredRedirectUri, on by default). */
function redirectUriOf(ctx: KoaContextWithOIDC): unknown {
  const given = ctx.oidc.params?.redirect_uri;
  const registered = ctx.oidc.client?.redirectUris ?? [];
  return given === undefined && registered.length === 1 ? registered[0] : given;
}
