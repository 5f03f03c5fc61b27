/**
 * The declarative catalog (STYLE.md §1-2, §6). A product is data: its tools, resources, prompts
 * and the scopes they need, with each scope explained in plain words. The authorization server's
 * scopes_supported and consent page, the public list_tools endpoint and the MCP host are all
 * derived from this one declaration.
 *
 * This module holds only types and pure derivations, so both auth/ and mcp/ may use it.
 */
import type { z } from 'zod';

export type ProductStatus = 'live' | 'roadmap';
export const SCOPE_FORM = /^([a-z][a-z0-9]*)\.([a-z][a-z0-9_]*)\.(read|write)$/;
export const TOOL_NAME_FORM = /^([a-z][a-z0-9]*)\.([a-z][a-z0-9_]*)$/;

/** What a handler receives; filled in by the trust pipeline (mcp/), never by the caller. */
export interface ToolContext<Repos = unknown> {
  /** Repositories bound to the grant's tenant, inside the call's transaction. */
  repos: Repos;
  tenant: { id: string; slug: string; name: string };
  user: { id: string; email: string };
  connection: { id: string; clientId: string; scopes: ReadonlySet<string> };
  requestId: string;
  /** `portico://<product>/<collection>/<id>` with the configured scheme. */
  resourceUri(collection: string, id: string): string;
  signal: AbortSignal;
}

export interface ToolDefinition<Input extends z.ZodRawShape = z.ZodRawShape, Repos = unknown> {
  name: string;
  title: string;
  /** Operationally accurate: what it does, what it needs, what it returns, what it will not do. */
  description: string;
  scope: string;
  /** Required: safety flags never default open. */
  destructive: boolean;
  /** For destructive tools: one sentence saying what will be destroyed; may use {argument} placeholders. */
  confirmation?: string;
  /** Whether repeating the call with the same arguments has no further effect. */
  idempotent?: boolean;
  /** Whether the tool reaches outside Portico's own data. */
  openWorld?: boolean;
  input: Input;
  handler(args: z.infer<z.ZodObject<Input>>, context: ToolContext<Repos>): Promise<unknown>;
  /**
   * For destructive tools: refuses, changing nothing, a call the handler would refuse whatever the
   * person answers (a state the change cannot start from, a value it does not take), with the
   * handler's own error. The pipeline runs it before it asks for a confirmation, so that nobody is
   * asked to confirm what cannot happen; the handler still decides on the records as it finds them.
   */
  check?(args: z.infer<z.ZodObject<Input>>, context: ToolContext<Repos>): Promise<void>;
}

export interface ResourceDefinition<Repos = unknown> {
  /** e.g. 'conversations' for portico://forge/conversations/{id} */
  collection: string;
  title: string;
  description: string;
  scope: string;
  mimeType?: string;
  read(id: string, context: ToolContext<Repos>): Promise<unknown>;
}

export interface PromptDefinition<Args extends z.ZodRawShape = z.ZodRawShape, Repos = unknown> {
  name: string;
  title: string;
  description: string;
  scope: string;
  args: Args;
  get(args: z.infer<z.ZodObject<Args>>, context: ToolContext<Repos>): Promise<PromptMessage[]>;
}

type PromptMessage =
  | { role: 'user' | 'assistant'; content: { type: 'text'; text: string } }
  | { role: 'user' | 'assistant'; content: { type: 'resource'; resource: { uri: string; mimeType?: string; text: string } } };

export interface ProductDefinition<Repos = unknown> {
  id: string;
  title: string;
  /** The product surface by kind, as SPEC.md part 1.5 lists it. */
  kind: string;
  status: ProductStatus;
  /**
   * Who may connect the product: `admins` when its data is the whole organization's set-up
   * (aegis reads every connection and member), so that a member cannot see through an AI client
   * what the console shows administrators only (DESIGN.md §8). Default: any member.
   */
  connectableBy?: 'admins' | 'members';
  /** Every scope of the product with its plain-words meaning (shown on the consent page). */
  scopes: Record<string, string>;
  tools: ToolDefinition<any, Repos>[];
  resources: ResourceDefinition<Repos>[];
  prompts: PromptDefinition<any, Repos>[];
  /**
   * The table behind each `<entity>_id` argument of the product's tools (e.g. conversation →
   * forge_conversations). The catalog-wide tenancy test uses it to aim every id argument at
   * the other tenant's records; an `_id` argument with no entry here fails the invariant test.
   */
  entities?: Record<string, string>;
  /** Sample rows for one tenant of the demo dataset. */
  seedDemo?: import('../db/demo.js').DemoSeeder;
  /** Builds the product's tenant-bound repositories for one call. */
  repositories?: (scope: import('../db/tenant_scope.js').TenantScope) => Repos;
}

export function defineTool<Input extends z.ZodRawShape, Repos = unknown>(tool: ToolDefinition<Input, Repos>): ToolDefinition<Input, Repos> {
  return tool;
}

export function defineResource<Repos = unknown>(resource: ResourceDefinition<Repos>): ResourceDefinition<Repos> {
  return resource;
}

export function definePrompt<Args extends z.ZodRawShape, Repos = unknown>(prompt: PromptDefinition<Args, Repos>): PromptDefinition<Args, Repos> {
  return prompt;
}

export function defineProduct<Repos>(product: ProductDefinition<Repos>): ProductDefinition<Repos> {
  return product;
}

/** The MCP tool annotations, derived from the declaration and never written twice. */
export function annotationsOf(tool: Pick<ToolDefinition, 'title' | 'destructive' | 'scope' | 'idempotent' | 'openWorld'>) {
  const readOnly = tool.scope.endsWith('.read');
  return {
    title: tool.title,
    readOnlyHint: readOnly,
    destructiveHint: tool.destructive,
    idempotentHint: readOnly || tool.idempotent === true,
    openWorldHint: tool.openWorld === true,
  };
}

interface ScopeInfo {
  scope: string;
  product: string;
  description: string;
}

/** The derived view every part uses. */
export interface Catalog {
  products: readonly ProductDefinition<any>[];
  product(id: string): ProductDefinition<any> | undefined;
  /** Whether the product's surface is live now (midas is not, until it ships). */
  isLive(id: string): boolean;
  /** Scopes of live products only: what the authorization server offers. */
  scopes: readonly ScopeInfo[];
  scopesOf(productId: string): string[];
  describeScope(scope: string): string | undefined;
  productOfScope(scope: string): string | undefined;
}

export function buildCatalog(products: readonly ProductDefinition<any>[], isLive: (id: string) => boolean = (id) => products.find((p) => p.id === id)?.status === 'live'): Catalog {
  const byId = new Map(products.map((p) => [p.id, p]));
  const liveScopes = (): ScopeInfo[] =>
    products.filter((p) => isLive(p.id)).flatMap((p) => Object.entries(p.scopes).map(([scope, description]) => ({ scope, product: p.id, description })));
  return {
    products,
    product: (id) => byId.get(id),
    isLive: (id) => byId.has(id) && isLive(id),
    get scopes() {
      return liveScopes();
    },
    scopesOf: (id) => (isLive(id) ? Object.keys(byId.get(id)?.scopes ?? {}) : []),
    describeScope: (scope) => byId.get(scope.split('.')[0])?.scopes[scope],
    productOfScope: (scope) => (byId.get(scope.split('.')[0])?.scopes[scope] ? scope.split('.')[0] : undefined),
  };
}
