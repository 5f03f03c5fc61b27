/**
 * `GET {mcp_url}/{product}/client_config[?tools=a,b][&read_only=true][&name_prefix=p-]`: the
 * `mcpServers` JSON of SPEC.md part 4 for one server, the same document `npm run client-config`
 * prints (shared/client_config.ts builds both). Public and tenant-free, like list_tools.
 */
import type Koa from 'koa';
import type { Catalog } from '../shared/catalog.js';
import { buildClientConfig, parseList, readOnlyParameter } from '../shared/client_config.js';
import type { Config } from '../shared/config.js';
import { AppError } from '../shared/errors.js';
import type { PorticoState } from '../shared/http.js';

const PARAMETERS = new Set(['tools', 'read_only', 'name_prefix']);

export function clientConfigRoute({ catalog, config }: { catalog: Catalog; config: Config }): Koa.Middleware<PorticoState> {
  const mcpPath = new URL(config.mcpUrl).pathname.replace(/\/+$/, '');
  const route = new RegExp(`^${mcpPath.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([a-z][a-z0-9]*)/client_config/?$`);
  return async (ctx, next) => {
    const match = route.exec(ctx.path);
    if (!match || !catalog.product(match[1])) return next();
    ctx.state.route = `${mcpPath}/:product/client_config`;
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new AppError('method_not_allowed', `${ctx.method} is not supported here`);
    }
    for (const name of Object.keys(ctx.query)) {
      if (!PARAMETERS.has(name)) throw new AppError('invalid_request', `unknown parameter ${name}; use tools, read_only or name_prefix`, { details: { field: name } });
    }
    const namePrefix = single(ctx.query.name_prefix, 'name_prefix');
    ctx.body = buildClientConfig(catalog, config, {
      products: [match[1]],
      tools: parseList(ctx.query.tools),
      readOnly: readOnlyParameter(single(ctx.query.read_only, 'read_only')),
      namePrefix,
    });
  };
}

function single(value: string | string[] | undefined, field: string): string | undefined {
  if (Array.isArray(value)) throw new AppError('invalid_request', `${field} may be given once`, { details: { field } });
  return value;
}
