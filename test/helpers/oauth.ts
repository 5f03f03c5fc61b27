/**
 * Drives Portico's real OAuth flow over HTTP, as a browser and a client would: dynamic
 * registration, authorization with PKCE S256 and a resource indicator, the sign-in and consent
 * pages (forms, CSRF token, cookies), the redirect, and the code exchange.
 *
 * `authorizeWithPassword` is the one-call version for tests that just need a real token; the
 * pieces (CookieJar, registerClient, pkce, startAuthorization, signIn, consent, exchangeCode,
 * refresh) are exported for tests of the flow's protections.
 */
import { createHash, randomBytes } from 'node:crypto';
import { rememberSecret } from './secrets.js';

export interface TokenSet {
  accessToken: string;
  refreshToken?: string;
  clientId: string;
  expiresIn: number;
  scope: string;
  tokenType: string;
}

export interface AuthorizeOptions {
  email: string;
  password: string;
  /** Organization to choose on the consent page, by slug. */
  tenant: string;
  /** Resource indicator, e.g. `${server.url}/mcp/forge`. Omit to let the server infer it from the scopes. */
  resource?: string;
  scopes: string[];
  /** Scopes to leave ticked on the consent page (default: all requested). */
  allow?: string[];
  redirectUri?: string;
  clientId?: string;
  clientName?: string;
}

/** A minimal cookie jar: name, value and path, which is all the flow's cookies use. */
export class CookieJar {
  private readonly cookies = new Map<string, { value: string; path: string }>();

  store(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      const [pair, ...attributes] = header.split(';').map((s) => s.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      let path = '/';
      let expired = value === '';
      for (const attribute of attributes) {
        const [key, val = ''] = attribute.split('=');
        if (key.toLowerCase() === 'path') path = val || '/';
        if (key.toLowerCase() === 'max-age' && Number(val) <= 0) expired = true;
        if (key.toLowerCase() === 'expires' && Date.parse(val) < Date.now()) expired = true;
      }
      const key = `${name};${path}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { value, path });
    }
  }

  header(url: string): string {
    const { pathname } = new URL(url);
    return [...this.cookies.entries()]
      .filter(([, c]) => pathname === c.path || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([key, c]) => `${key.split(';')[0]}=${c.value}`)
      .join('; ');
  }

  /** fetch with this jar's cookies and without following redirects. */
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const cookie = this.header(url);
    if (cookie) headers.set('cookie', cookie);
    const response = await fetch(url, { ...init, headers, redirect: 'manual' });
    this.store(response);
    return response;
  }
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  rememberSecret(verifier);
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const DEFAULT_REDIRECT_URI = 'http://127.0.0.1/callback';

/**
 * A fetch for `authMount({ fetch })` that serves one client ID metadata document: `metadata`, with
 * `client_id` set to the URL it is served at, and 404 for any other URL.
 */
export function metadataDocumentFetch(clientId: string, metadata: Record<string, unknown>): typeof fetch {
  return (async (input: string | URL | Request) => {
    if (String(input instanceof Request ? input.url : input) !== clientId) return new Response('not found', { status: 404 });
    return Response.json({ client_id: clientId, ...metadata });
  }) as typeof fetch;
}

export interface RegisteredClient {
  client_id: string;
  registration_client_uri?: string;
  registration_access_token?: string;
  redirect_uris: string[];
  [key: string]: unknown;
}

export async function registerClient(baseUrl: string, metadata: Record<string, unknown> = {}): Promise<RegisteredClient> {
  const response = await fetch(`${baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test client',
      redirect_uris: [DEFAULT_REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...metadata,
    }),
  });
  const body = await response.json();
  if (response.status !== 201) throw new Error(`registration failed: ${response.status} ${JSON.stringify(body)}`);
  return body as RegisteredClient;
}

/** An HTML form of a page: its action and its fields (hidden inputs, select options, checkboxes). */
export interface ParsedForm {
  action: string;
  csrf: string;
  organizations: Array<{ id: string; slug: string }>;
  scopes: string[];
}

export function parseForm(html: string): ParsedForm {
  const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1];
  const csrf = /name="csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !csrf) throw new Error(`no form on the page: ${html.slice(0, 500)}`);
  const organizations = [...html.matchAll(/<option value="([^"]+)" data-slug="([^"]+)"/g)].map((m) => ({ id: m[1], slug: m[2] }));
  const scopes = [...html.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]);
  return { action: unescapeHtml(action), csrf: unescapeHtml(csrf), organizations, scopes };
}

export function unescapeHtml(value: string): string {
  return value.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)));
}

export interface Authorization {
  jar: CookieJar;
  clientId: string;
  redirectUri: string;
  verifier: string;
  state: string;
  /** The page the flow stopped at (login form), absolute URL. */
  pageUrl: string;
  /** The first response of the authorization endpoint. */
  response: Response;
}

/** Sends the authorization request and follows it to the sign-in page. */
export async function startAuthorization(
  baseUrl: string,
  options: { clientId: string; redirectUri?: string; resource?: string; scopes: string[]; jar?: CookieJar; extra?: Record<string, string>; pkce?: { verifier: string; challenge: string } | null },
): Promise<Authorization> {
  const jar = options.jar ?? new CookieJar();
  const redirectUri = options.redirectUri ?? DEFAULT_REDIRECT_URI;
  const pair = options.pkce === null ? undefined : (options.pkce ?? pkce());
  const state = randomBytes(8).toString('hex');
  const params = new URLSearchParams({ client_id: options.clientId, redirect_uri: redirectUri, response_type: 'code', scope: options.scopes.join(' '), state });
  if (pair) {
    params.set('code_challenge', pair.challenge);
    params.set('code_challenge_method', 'S256');
  }
  if (options.resource) params.set('resource', options.resource);
  for (const [key, value] of Object.entries(options.extra ?? {})) params.set(key, value);
  const response = await jar.fetch(`${baseUrl}/oauth/authorize?${params}`);
  const location = response.headers.get('location');
  return {
    jar, clientId: options.clientId, redirectUri, verifier: pair?.verifier ?? '', state, response,
    pageUrl: location ? new URL(location, baseUrl).href : '',
  };
}

/**
 * An authorization error for a self-registered client: a 400 page, no redirect, and the way back
 * the person may choose (checklist A5(b)). Returns where that link leads (the error for the client).
 */
export async function errorReturnOf(response: Response): Promise<URL> {
  if (response.status !== 400 || response.headers.get('location')) throw new Error(`expected the error page, got ${response.status} to ${response.headers.get('location')}`);
  const html = await response.text();
  const href = /<a class="button" href="([^"]*)"/.exec(html)?.[1];
  if (!href) throw new Error('the error page has no way back to the client');
  return new URL(unescapeHtml(href));
}

/** Follows redirects within the authorization server; stops at a page or at the client's redirect URI. */
export async function follow(baseUrl: string, jar: CookieJar, response: Response): Promise<{ response: Response; url: string; html?: string }> {
  let current = response;
  let url = '';
  for (let hops = 0; hops < 10; hops++) {
    const location = current.headers.get('location');
    if (current.status < 300 || current.status >= 400 || !location) {
      return { response: current, url, html: (current.headers.get('content-type') ?? '').includes('html') ? await current.text() : undefined };
    }
    url = new URL(location, baseUrl).href;
    if (!url.startsWith(`${baseUrl}/`)) return { response: current, url };
    current = await jar.fetch(url);
  }
  throw new Error('too many redirects');
}

export async function postForm(baseUrl: string, jar: CookieJar, action: string, fields: Array<[string, string]>, headers: Record<string, string> = {}): Promise<Response> {
  return jar.fetch(new URL(action, baseUrl).href, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(baseUrl).origin, 'sec-fetch-site': 'same-origin', ...headers },
    body: new URLSearchParams(fields).toString(),
  });
}

/** Submits the sign-in page; returns the next page (the consent page) or wherever the flow went. */
export async function signIn(baseUrl: string, auth: Authorization, email: string, password: string) {
  rememberSecret(password);
  const page = await follow(baseUrl, auth.jar, auth.response);
  if (!page.html) throw new Error(`expected the sign-in page, got ${page.response.status} ${page.url}`);
  const form = parseForm(page.html);
  const response = await postForm(baseUrl, auth.jar, form.action, [['csrf', form.csrf], ['email', email], ['password', password]]);
  return follow(baseUrl, auth.jar, response);
}

/** Submits the consent page for a tenant (by slug); returns the client redirect URL. */
export async function consent(
  baseUrl: string,
  jar: CookieJar,
  html: string,
  options: { tenant: string; allow?: string[]; decision?: 'allow' | 'deny'; tenantId?: string },
): Promise<{ response: Response; url: string; html?: string }> {
  const form = parseForm(html);
  const tenantId = options.tenantId ?? form.organizations.find((o) => o.slug === options.tenant)?.id;
  if (!tenantId) throw new Error(`organization ${options.tenant} is not offered on the consent page`);
  const scopes = options.allow ?? form.scopes;
  const response = await postForm(baseUrl, jar, form.action, [
    ['csrf', form.csrf], ['tenant', tenantId], ...scopes.map((s): [string, string] => ['scope', s]), ['decision', options.decision ?? 'allow'],
  ]);
  return follow(baseUrl, jar, response);
}

/** A token request; a field given as an array is sent once per value (several `resource`s). */
export async function tokenRequest(baseUrl: string, fields: Record<string, string | string[]>): Promise<Response> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) for (const one of [value].flat()) body.append(name, one);
  return fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  });
}

interface TokenResponse {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
  token_type: string;
}

function tokenSet(body: TokenResponse, clientId: string): TokenSet {
  rememberSecret(body.access_token, body.refresh_token);
  return { accessToken: body.access_token, refreshToken: body.refresh_token, clientId, expiresIn: body.expires_in, scope: body.scope, tokenType: body.token_type };
}

export async function exchangeCode(baseUrl: string, input: { code: string; clientId: string; redirectUri: string; verifier: string; resource?: string }): Promise<TokenSet> {
  rememberSecret(input.code, input.verifier);
  const response = await tokenRequest(baseUrl, {
    grant_type: 'authorization_code', code: input.code, client_id: input.clientId, redirect_uri: input.redirectUri, code_verifier: input.verifier,
    ...(input.resource ? { resource: input.resource } : {}),
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`code exchange failed: ${response.status} ${JSON.stringify(body)}`);
  return tokenSet(body as TokenResponse, input.clientId);
}

export async function refresh(baseUrl: string, input: { refreshToken: string; clientId: string; resource?: string }): Promise<TokenSet> {
  const response = await tokenRequest(baseUrl, {
    grant_type: 'refresh_token', refresh_token: input.refreshToken, client_id: input.clientId, ...(input.resource ? { resource: input.resource } : {}),
  });
  const body = await response.json();
  if (response.status !== 200) throw new Error(`refresh failed: ${response.status} ${JSON.stringify(body)}`);
  return tokenSet(body as TokenResponse, input.clientId);
}

/** The whole flow up to the authorization code (sign-in, organization choice, consent). */
export async function authorizeCode(baseUrl: string, options: AuthorizeOptions & { jar?: CookieJar }) {
  const clientId = options.clientId ?? (await registerClient(baseUrl, { client_name: options.clientName ?? 'Test client', redirect_uris: [options.redirectUri ?? DEFAULT_REDIRECT_URI] })).client_id;
  const auth = await startAuthorization(baseUrl, { clientId, redirectUri: options.redirectUri, resource: options.resource, scopes: options.scopes, jar: options.jar });
  let page = await follow(baseUrl, auth.jar, auth.response);
  if (page.html && /name="password"/.test(page.html)) {
    const form = parseForm(page.html);
    page = await follow(baseUrl, auth.jar, await postForm(baseUrl, auth.jar, form.action, [['csrf', form.csrf], ['email', options.email], ['password', options.password]]));
  }
  if (page.html && /name="decision"/.test(page.html)) page = await consent(baseUrl, auth.jar, page.html, { tenant: options.tenant, allow: options.allow });
  const redirect = URL.parse(page.url);
  const code = redirect?.searchParams.get('code');
  if (!redirect || !code) {
    throw new Error(`authorization did not return a code: ${page.response.status} ${page.url} ${page.html?.replace(/<style>[\s\S]*<\/style>/, '').slice(0, 800) ?? ''}`);
  }
  if (redirect.searchParams.get('state') !== auth.state) throw new Error('state mismatch');
  return { code, clientId, redirectUri: auth.redirectUri, verifier: auth.verifier, redirect, jar: auth.jar };
}

/** The real flow end to end; returns the tokens. */
export async function authorizeWithPassword(baseUrl: string, options: AuthorizeOptions): Promise<TokenSet> {
  rememberSecret(options.password);
  const { code, clientId, redirectUri, verifier } = await authorizeCode(baseUrl, options);
  return exchangeCode(baseUrl, { code, clientId, redirectUri, verifier, resource: options.resource });
}
