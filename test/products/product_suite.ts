/**
 * Support for the product tests (cavalier, aegis, harvest, reclaim): one real server per database
 * per test file (demo data of every product in acme and globex), real MCP SDK clients with real
 * bearer tokens, and assertions for the trust contract's answers.
 */
import test, { type ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson, sha256Hex } from '../../db/audit.js';
import { databasesUnderTest, type DbKind } from '../helpers/db.js';
import { connect, grant, rawCall, startMcpServer, type Connected, type McpTestServer } from '../helpers/mcp.js';

export type Tenant = 'acme' | 'globex';

export interface ToolOutcome {
  isError: boolean;
  structured: any;
}

export interface ProductEnv {
  server: McpTestServer;
  kind: DbKind;
  /** A connected SDK client for (tenant, scopes, user); cached for the file. */
  client(tenant: Tenant, scopes: string[], user?: string): Promise<Client>;
  /** tools/call through the SDK; returns the structured result and whether it is an error result. */
  call(tenant: Tenant, scopes: string[], name: string, args?: Record<string, unknown>, user?: string): Promise<ToolOutcome>;
  /** tools/call that must succeed; returns its structured content. */
  ok(t: ExecutionContext, tenant: Tenant, scopes: string[], name: string, args?: Record<string, unknown>): Promise<any>;
}

export function productSuite(product: string) {
  const servers = new Map<DbKind, Promise<McpTestServer>>();
  const clients = new Map<string, Promise<Connected>>();

  test.after.always(async () => {
    for (const connected of clients.values()) await (await connected.catch(() => undefined))?.close().catch(() => undefined);
    for (const server of servers.values()) await (await server.catch(() => undefined))?.close();
  });

  function serverFor(kind: DbKind): Promise<McpTestServer> {
    if (!servers.has(kind)) servers.set(kind, startMcpServer(kind));
    return servers.get(kind)!;
  }

  function envOf(server: McpTestServer, kind: DbKind): ProductEnv {
    const client = async (tenant: Tenant, scopes: string[], user?: string) => {
      const key = `${kind}|${tenant}|${user ?? ''}|${[...scopes].sort().join(' ')}`;
      if (!clients.has(key)) clients.set(key, connect(server, { product, tenant, scopes, user }));
      return (await clients.get(key)!).client;
    };
    const call = async (tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown> = {}, user?: string) => {
      const result = await (await client(tenant, scopes, user)).callTool({ name, arguments: args });
      return { isError: result.isError === true, structured: result.structuredContent };
    };
    return {
      server, kind, client, call,
      async ok(t, tenant, scopes, name, args = {}) {
        const result = await call(tenant, scopes, name, args);
        if (result.isError) t.fail(`${name} failed: ${JSON.stringify(result.structured)}`);
        return result.structured;
      },
    };
  }

  /** Registers `title [sqlite]` and `title [postgres]` on this file's servers. */
  return function each(title: string, body: (t: ExecutionContext, env: ProductEnv) => Promise<void>): void {
    for (const kind of databasesUnderTest()) {
      test(`${title} [${kind}]`, async (t) => {
        const server = await serverFor(kind);
        await body(t, envOf(server, kind));
      });
    }
  };
}

/** A call without the tool's scope: HTTP 403 insufficient_scope naming the scope (MCP step-up), and no effect. */
export async function assertInsufficientScope(t: ExecutionContext, env: ProductEnv, product: string, tenant: Tenant, heldScopes: string[], name: string, args: Record<string, unknown>, needed: string): Promise<void> {
  const { token } = await grant(env.server, { product, tenant, scopes: heldScopes });
  const raw = await rawCall(env.server, token, product, 'tools/call', { name, arguments: args });
  t.is(raw.status, 403, `${name} without ${needed}`);
  t.is(raw.body?.error?.data?.code, 'insufficient_scope');
  t.regex(raw.headers.get('www-authenticate') ?? '', new RegExp(`error="insufficient_scope", scope="${needed.replace(/\./g, '\\.')}"`));
}

/** A call with another tenant's id: HTTP 403 forbidden_cross_tenant. */
export async function assertCrossTenant(t: ExecutionContext, env: ProductEnv, product: string, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>): Promise<void> {
  const { token } = await grant(env.server, { product, tenant, scopes });
  const raw = await rawCall(env.server, token, product, 'tools/call', { name, arguments: args });
  t.is(raw.status, 403, `${name} across tenants`);
  t.is(raw.body?.error?.data?.code, 'forbidden_cross_tenant');
}

/** invalid_arguments (JSON-RPC -32602) naming `field`. */
export async function assertInvalidArguments(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, field: string): Promise<void> {
  const client = await env.client(tenant, scopes);
  const error = await t.throwsAsync(client.callTool({ name, arguments: args }), { instanceOf: McpError }, `${name} ${JSON.stringify(args)}`);
  const data = (error as McpError & { data?: { code?: string; field?: string } }).data;
  t.is(data?.code, 'invalid_arguments', `${name}: ${error?.message}`);
  t.is(data?.field, field, `${name}: ${error?.message}`);
  t.regex(error!.message, new RegExp(field.replace(/\./g, '\\.')));
}

/** A tool result error (isError) with this code; returns its structured content. */
export async function assertToolError(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const result = await env.call(tenant, scopes, name, args);
  t.true(result.isError, `${name} should fail with ${code}`);
  t.is(result.structured?.code, code, JSON.stringify(result.structured));
  return result.structured;
}

/**
 * A destructive call as a person confirms it: the first call must answer confirmation_required
 * (with the product's sentence, when given, and no change, when `unchanged` checks one), then the
 * same call with confirmed: true runs; its outcome, success or refusal, is returned.
 */
export async function callConfirmed(
  t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>,
  expect: { sentence?: RegExp; unchanged?(): Promise<void> } = {},
): Promise<ToolOutcome> {
  const first = await env.call(tenant, scopes, name, args);
  t.true(first.isError, `${name} should ask for confirmation first: ${JSON.stringify(first.structured)}`);
  t.is(first.structured?.code, 'confirmation_required', JSON.stringify(first.structured));
  if (expect.sentence) t.regex(first.structured.will_destroy, expect.sentence);
  t.deepEqual(first.structured?.confirm_with, { tool: name, arguments: { ...args, confirmed: true } });
  await expect.unchanged?.();
  return env.call(tenant, scopes, name, { ...args, confirmed: true });
}

/** A confirmed destructive call that must succeed; returns its structured content. */
export async function okConfirmed(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>): Promise<any> {
  const done = await callConfirmed(t, env, tenant, scopes, name, args);
  if (done.isError) t.fail(`${name} failed after confirmation: ${JSON.stringify(done.structured)}`);
  return done.structured;
}

/** A call's refusal as the client sees it, a tool result error or a JSON-RPC error (invalid_arguments, forbidden_cross_tenant). */
export interface Refusal {
  code: string | undefined;
  message: string;
  /** The result's structured content, or the JSON-RPC error's data without its request id. */
  details: any;
}

async function refusalOf(env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>): Promise<Refusal | undefined> {
  const client = await env.client(tenant, scopes);
  try {
    const result = await client.callTool({ name, arguments: args });
    if (result.isError !== true) return undefined;
    const structured = result.structuredContent as any;
    return { code: structured?.code, message: structured?.message, details: structured };
  } catch (error) {
    if (!(error instanceof McpError)) throw error;
    const { request_id: _requestId, ...details } = (error as McpError & { data?: Record<string, unknown> }).data ?? {};
    return { code: details.code as string | undefined, message: error.message, details };
  }
}

/**
 * A destructive call that cannot happen (an impossible state change, a value the tool refuses) is
 * refused before anyone is asked to confirm it: the first call answers `code`, not
 * confirmation_required, and leaves no pending confirmation; the call with confirmed: true is
 * refused alike. Returns the refusal.
 */
export async function assertRefusedUnconfirmed(t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>, code: string): Promise<Refusal> {
  const pending = async () => (await env.server.db('mcp_confirmations').where({ tool: name, args_hash: sha256Hex(canonicalJson(args)) }).select('id')).map((row) => row.id);
  const before = await pending();
  const first = await refusalOf(env, tenant, scopes, name, args);
  t.is(first?.code, code, `${name} ${JSON.stringify(args)} should be refused with ${code} before confirmation: ${JSON.stringify(first)}`);
  t.deepEqual(await pending(), before, `${name} left a pending confirmation for a call it refuses`);
  const confirmed = await refusalOf(env, tenant, scopes, name, { ...args, confirmed: true });
  t.deepEqual(confirmed, first, `${name} with confirmed: true should be refused as the first call was`);
  return first!;
}

/**
 * The confirmation protocol: the first call answers confirmation_required with the product's
 * sentence and changes nothing (checked by `unchanged`); the same call with confirmed: true runs
 * once; repeating it finds nothing left to destroy.
 */
export async function assertConfirmationFlow(
  t: ExecutionContext, env: ProductEnv, tenant: Tenant, scopes: string[], name: string, args: Record<string, unknown>,
  expect: { sentence: RegExp; unchanged(): Promise<void> },
): Promise<any> {
  const done = await callConfirmed(t, env, tenant, scopes, name, args, expect);
  t.false(done.isError, JSON.stringify(done.structured));
  // Done once: the record is gone, so repeating the confirmed call finds nothing to destroy.
  const again = await env.call(tenant, scopes, name, { ...args, confirmed: true });
  t.true(again.isError);
  t.is(again.structured?.code, 'not_found', JSON.stringify(again.structured));
  return done.structured;
}
