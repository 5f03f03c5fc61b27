/**
 * The `Host` names Portico answers to: the hosts of its public URLs, loopback, and ALLOWED_HOSTS
 * (`*` for any). oidc-provider writes its endpoints' URLs from the request's host, so a request
 * for another name would get metadata, registration URIs and redirects pointing there (a shared
 * cache in front could keep them); and the MCP servers refuse other names against DNS rebinding
 * (checklist I1). Behind a proxy with TRUST_PROXY=1 the forwarded host is the one checked.
 */
import type Koa from 'koa';
import type { Config } from './config.js';
import { AppError } from './errors.js';

export type HostCheck = (hostname: string) => boolean;

export function hostCheck(config: Pick<Config, 'authUrl' | 'mcpUrl' | 'apiUrl' | 'allowedHosts'>): HostCheck {
  const allowed = new Set([config.authUrl, config.mcpUrl, config.apiUrl].map((url) => new URL(url).hostname)
    .concat('localhost', '127.0.0.1', '[::1]', ...config.allowedHosts));
  if (allowed.has('*')) return () => true;
  return (hostname) => allowed.has(hostname.toLowerCase());
}

export function unknownHost(): AppError {
  return new AppError('forbidden', 'requests for this Host are not accepted (see ALLOWED_HOSTS)');
}

/** Refuses every request for a name Portico does not answer to (the parts mounted after it). */
export function hostGuard(config: Config): Koa.Middleware {
  const allowed = hostCheck(config);
  return (ctx, next) => {
    if (!allowed(ctx.hostname)) throw unknownHost();
    return next();
  };
}
