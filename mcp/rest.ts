/**
 * The public, unauthenticated documents of the MCP side: the inventory (`GET {mcp_url}/`), each
 * product's tool catalog (`GET {mcp_url}/{product}/list_tools`) and each product's Protected
 * Resource Metadata (RFC 9728). All derived from the catalog; nothing tenant-specific.
 */
import { SUPPORTED_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import type { Catalog, ProductDefinition } from '../shared/catalog.js';
import type { Config } from '../shared/config.js';
import type { Pipeline } from './pipeline.js';

export interface PublicDeps {
  catalog: Catalog;
  config: Config;
  pipeline: Pipeline;
  version: string;
  isLive(productId: string): boolean;
  metadataUrl(productId: string): string;
}

export function inventory(deps: PublicDeps) {
  return {
    service: 'portico',
    version: deps.version,
    mcp_protocol_versions: [...SUPPORTED_PROTOCOL_VERSIONS],
    mcp_protocol_version_latest: LATEST_PROTOCOL_VERSION,
    authorization_server: deps.config.authUrl,
    products: deps.catalog.products.map((product) => productEntry(deps, product)),
  };
}

function productEntry(deps: PublicDeps, product: ProductDefinition<any>) {
  const live = deps.isLive(product.id);
  return {
    id: product.id,
    title: product.title,
    kind: product.kind,
    url: `${deps.config.mcpUrl}/${product.id}`,
    status: live ? 'live' : 'roadmap',
    tool_count: live ? product.tools.length : 0,
    list_tools_url: `${deps.config.mcpUrl}/${product.id}/list_tools`,
    resource_templates: live
      ? product.resources.map((r) => ({ uri_template: deps.pipeline.resourceUri(product.id, r.collection, '{id}'), title: r.title, required_scope: r.scope }))
      : [],
    prompts: live ? product.prompts.map((p) => ({ name: p.name, title: p.title, required_scope: p.scope })) : [],
    scopes: live ? Object.entries(product.scopes).map(([scope, description]) => ({ scope, description })) : [],
    resource_metadata_url: deps.metadataUrl(product.id),
  };
}

export function listTools(deps: PublicDeps, product: ProductDefinition<any>) {
  const live = deps.isLive(product.id);
  return {
    product: product.id,
    status: live ? 'live' : 'roadmap',
    tools: live
      ? product.tools.map((tool) => {
        const compiled = deps.pipeline.compiled(tool.name)!;
        return {
          name: tool.name,
          title: tool.title,
          description: tool.description,
          input_schema: compiled.inputSchema,
          required_scope: tool.scope,
          destructive: tool.destructive,
          ...(tool.destructive ? { confirmation: tool.confirmation } : {}),
          annotations: compiled.annotations,
        };
      })
      : [],
  };
}

/** RFC 9728 §2: `resource` is exactly the product URL the token must be issued for, spelled as the client called it (§3.3). */
export function protectedResourceMetadata(deps: PublicDeps, product: ProductDefinition<any>, trailingSlash = false) {
  return {
    resource: `${deps.config.mcpUrl}/${product.id}${trailingSlash ? '/' : ''}`,
    authorization_servers: [deps.config.authUrl],
    scopes_supported: deps.catalog.scopesOf(product.id),
    bearer_methods_supported: ['header'],
    resource_name: `Portico ${product.title}`,
    resource_documentation: `${deps.config.mcpUrl}/${product.id}/list_tools`,
  };
}
