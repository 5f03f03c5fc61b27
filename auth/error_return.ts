/**
 * No automatic error redirect to a redirect URI Portico does not vouch for (checklist A5(b);
 * RFC 9700 §4.11.2: the authorization server "SHOULD only automatically redirect the user agent
 * if it trusts the redirect URI").
 *
 * A pre-registered client's redirect URIs are an administrator's. A self-registered client's, or
 * a metadata document's, are whatever anyone registered: an error at the authorization endpoint,
 * before the person has done anything, would make Portico's domain a redirector to any site. For
 * those clients the error is shown on a page whose one way back to the client is a link (or, for
 * response_mode=form_post, a form) the person has to choose. Once the person has interacted (the
 * provider's `resume` route: signed in, chose an organization, denied), errors go back as usual.
 *
 * Why after the fact: oidc-provider sends these errors through its response-mode handlers, which
 * cannot be replaced (registerResponseMode keeps the built-in `query`, `fragment`, `form_post`),
 * so the response it built is swapped for the page on the way out.
 */
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import type { PorticoState } from '../shared/http.js';
import { clientKindOf, redirectHostOf } from './clients.js';
import { errorReturnPage, PAGE_HEADERS } from './pages.js';

interface AuthorizationError {
  message?: string;
  error_description?: string;
  scope?: string;
  expose?: boolean;
  allow_redirect?: boolean;
}

interface OidcView {
  route?: string;
  client?: { clientId: string; clientName?: string };
  params?: Record<string, unknown>;
}

/** The parameters the provider sends back to the client for an error (its err_out), with `iss`. */
function errorParameters(error: AuthorizationError, state: unknown, issuer: string): Record<string, string> {
  const fields: Record<string, string> = error.expose
    ? { error: String(error.message), ...(error.error_description === undefined ? {} : { error_description: error.error_description }), ...(error.scope === undefined ? {} : { scope: error.scope }) }
    : { error: 'server_error', error_description: 'oops! something went wrong' };
  if (typeof state === 'string' && state) fields.state = state;
  fields.iss = issuer;
  return fields;
}

export function errorReturns(provider: Provider): Koa.Middleware<PorticoState> {
  /** Per request: what the provider is about to send to the client's redirect URI. */
  const sent = new WeakMap<object, Record<string, string>>();
  const note = (ctx: (Koa.Context & { oidc?: OidcView }) | undefined, error: AuthorizationError) => {
    if (!ctx || !error) return;
    // The provider emits once more if it then finds the redirect URI itself invalid; the last word counts.
    if (ctx.oidc?.route !== 'authorization' || error.allow_redirect === false) sent.delete(ctx);
    else sent.set(ctx, errorParameters(error, ctx.oidc.params?.state, provider.issuer));
  };
  provider.on('authorization.error', note);
  provider.on('server_error', note);

  return async (ctx, next) => {
    await next();
    const fields = sent.get(ctx);
    const oidc = (ctx as unknown as { oidc?: OidcView }).oidc;
    const client = oidc?.client;
    const redirectUri = oidc?.params?.redirect_uri;
    if (!fields || !client || typeof redirectUri !== 'string' || clientKindOf(client.clientId) === 'registered') return;
    const location = ctx.response.get('location');
    let back: { href: string } | { action: string; fields: Record<string, string> };
    if (ctx.status >= 300 && ctx.status < 400 && location) back = { href: location };
    else if (oidc.params?.response_mode === 'form_post') back = { action: redirectUri, fields };
    else return;
    ctx.remove('Location');
    ctx.status = 400;
    ctx.set(PAGE_HEADERS);
    ctx.type = 'html';
    ctx.body = errorReturnPage({
      message: fields.error_description ?? fields.error,
      code: fields.error,
      requestId: ctx.state.requestId,
      clientName: client.clientName ?? client.clientId,
      redirectHost: redirectHostOf(redirectUri),
      back,
    });
  };
}
