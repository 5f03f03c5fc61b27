/**
 * An MCP client's OAuth provider (the SDK's OAuthClientProvider) whose "browser" is a person on
 * Portico's sign-in and consent pages, driven over HTTP: it signs in, chooses the organization,
 * leaves ticked only what `allow` returns, allows, and keeps the authorization code. Tests use it
 * with the SDK's StreamableHTTPClientTransport and auth() exactly as a real client would.
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { McpTestServer } from './mcp.js';
import { consent, CookieJar, follow, parseForm, postForm } from './oauth.js';

const SDK_REDIRECT = 'http://127.0.0.1:9/callback';

export interface BrowserOptions {
  email: string;
  password: string;
  tenant: string;
  /** What the person leaves ticked, given what the client asked for. */
  allow: (requested: string[]) => string[];
  grantTypes?: string[];
  clientName?: string;
  /**
   * Ask again for the scopes already held when a step-up challenge names only the missing one,
   * as the 2026 draft of MCP authorization (SEP-2350) asks of clients.
   */
  keepHeldScopes?: boolean;
}

export class BrowserDrivenProvider implements OAuthClientProvider {
  private client?: OAuthClientInformationMixed;
  private tokenSet?: OAuthTokens;
  private verifier = '';
  code?: string;
  /** Every authorization request the SDK built: its scope and resource parameters. */
  readonly requests: Array<{ scope: string; resource: string | null }> = [];
  /** What the person leaves ticked; a test may change their mind between authorizations. */
  allow: (requested: string[]) => string[];

  constructor(private readonly server: McpTestServer, private readonly options: BrowserOptions) {
    this.allow = options.allow;
  }

  /** The scopes of the latest authorization request, as the client sent them. */
  get requestedScopes(): string[] {
    return (this.requests.at(-1)?.scope ?? '').split(' ').filter(Boolean);
  }

  get redirectUrl() {
    return SDK_REDIRECT;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName ?? 'SDK client', redirect_uris: [SDK_REDIRECT], response_types: ['code'], token_endpoint_auth_method: 'none',
      grant_types: this.options.grantTypes ?? ['authorization_code', 'refresh_token'],
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }

  tokens() {
    return this.tokenSet;
  }

  saveTokens(tokens: OAuthTokens) {
    this.tokenSet = tokens;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }

  async redirectToAuthorization(url: URL) {
    this.requests.push({ scope: url.searchParams.get('scope') ?? '', resource: url.searchParams.get('resource') });
    let requested = (url.searchParams.get('scope') ?? '').split(' ').filter(Boolean);
    if (this.options.keepHeldScopes) {
      requested = [...new Set([...(this.tokenSet?.scope ?? '').split(' ').filter(Boolean), ...requested])];
      url.searchParams.set('scope', requested.join(' '));
    }
    const base = this.server.config.authUrl;
    const jar = new CookieJar();
    let page = await follow(base, jar, await jar.fetch(url.href));
    if (page.html && /name="password"/.test(page.html)) {
      const form = parseForm(page.html);
      page = await follow(base, jar, await postForm(base, jar, form.action, [['csrf', form.csrf], ['email', this.options.email], ['password', this.options.password]]));
    }
    if (!page.html) throw new Error(`expected the consent page, got ${page.response.status} ${page.url}`);
    page = await consent(base, jar, page.html, { tenant: this.options.tenant, allow: this.allow(requested) });
    const redirect = new URL(page.url);
    if (redirect.origin + redirect.pathname !== SDK_REDIRECT) throw new Error(`unexpected redirect ${page.url}`);
    this.code = redirect.searchParams.get('code') ?? undefined;
  }
}
