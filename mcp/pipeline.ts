/**
 * The trust pipeline (DESIGN.md §6): the one code path of every tools/call, resources/read and
 * prompts/get, and the only caller of tool handlers, resource readers and prompt builders.
 *
 *   1. token → live grant for this product           authenticate()      401 invalid_token / connection_revoked
 *   2. tool exists and its product is live           admitTool()         unknown_tool
 *   3. grant's scopes ⊇ the tool's scope             admitTool()         403 insufficient_scope
 *   4. arguments match the tool's schema             parseArguments()    invalid_arguments (names the field)
 *      every `<entity>_id` argument is in the grant's tenant            403 forbidden_cross_tenant / not_found
 *   5. destructive → a confirmation bound to connection + tool + argument hash, or elicitation,
 *      asked only for a call the tool's check does not refuse
 *   6. handler in one transaction with tenant-bound repositories; audit record in the same
 *      transaction (success) or after the rollback (failure); no audit record, no effect.
 *
 * It knows nothing of HTTP or of the MCP SDK: the host hands it a principal and the message's
 * parameters and turns what it returns or throws into the wire form.
 */
import { performance } from 'node:perf_hooks';
import { readerOf, type Db, type DbOrTrx } from '../db/connect.js';
import { appendAudit, AuditWriter, canonicalJson, sha256Hex, type AuditKind } from '../db/audit.js';
import { authenticateBearer, touchLiveConnection, type Principal } from '../db/grant_store.js';
import { TenantScope } from '../db/tenant_scope.js';
import { uuidv7 } from '../db/ids.js';
import type { Catalog, ProductDefinition, PromptDefinition, ResourceDefinition, ToolContext, ToolDefinition } from '../shared/catalog.js';
import type { Config } from '../shared/config.js';
import { AppError, toAppError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { Counter, Histogram, MetricsRegistry } from '../shared/metrics.js';
import { consumeConfirmation, createConfirmation, CONFIRMATION_TTL_MS } from './confirmations.js';
import { isToolResultError } from './errors.js';
import { compilePromptArgs, compileTool, parseArguments, type CompiledTool } from './schemas.js';
import { PrincipalCache } from './principal_cache.js';
import { findTokenOwner } from './token_owner.js';
import { Cancellation, Deadlines } from './cancellation.js';
import { isCancelledStatement, isUnavailable, isWriteClash, statementTimedOut, translateDbError } from '../db/errors.js';

export interface PipelineDeps {
  db: Db;
  config: Config;
  catalog: Catalog;
  log: Logger;
  metrics: MetricsRegistry;
  /** Whether a product's surface is live (midas is not, until it ships). */
  isLive(productId: string): boolean;
  /** Principals of recent tokens, invalidated by revocation events (mcp/principal_cache.ts); none: every request asks the database. */
  principals?: PrincipalCache;
}

export interface CallOptions {
  /** Portico's request id (X-Request-Id), stored in the audit record and every error. */
  requestId: string;
  /**
   * The call's own cancellation when the caller made one for it (the host's, cancelled when the
   * client cancels or the session closes, with the reason it closed): the time-out cancels it too.
   */
  cancellation?: Cancellation;
  /**
   * Present when the client declared elicitation: asks the person; resolves true when they
   * confirmed, false when they declined, undefined when the client could not ask (it answered
   * with an error, or with something that is not an answer to the question).
   */
  askPerson?: (message: string) => Promise<boolean | undefined>;
}

/** An MCP tools/call result. */
export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

type PipelineMethod = 'tools/call' | 'resources/read' | 'prompts/get';

interface Outcome<T> {
  value: T;
  outcome: string;
}

const METHOD_KIND: Record<PipelineMethod, AuditKind> = { 'tools/call': 'tool', 'resources/read': 'resource', 'prompts/get': 'prompt' };

export class Pipeline {
  private readonly tools = new Map<string, CompiledTool>();
  private readonly promptSchemas = new Map<string, ReturnType<typeof compilePromptArgs>>();
  private readonly calls: Counter;
  private readonly durations: Histogram;
  /** The tool time-out of every call in flight, on one timer. */
  private readonly deadlines: Deadlines;
  /** Group commit for the records of reads and refusals (docs/performance.md). */
  private readonly audit: AuditWriter;
  /** Reads outside a transaction: on SQLite, a read-only connection beside the writer (db/connect.ts). */
  private readonly reads: Db;

  constructor(private readonly deps: PipelineDeps) {
    this.audit = new AuditWriter(deps.db);
    this.reads = readerOf(deps.db);
    for (const product of deps.catalog.products) {
      for (const tool of product.tools) this.tools.set(tool.name, compileTool(product, tool));
      for (const prompt of product.prompts) this.promptSchemas.set(prompt.name, compilePromptArgs(prompt));
    }
    this.calls = deps.metrics.counter('portico_mcp_calls_total', 'MCP tool calls, resource reads and prompt gets by product, kind and outcome');
    this.durations = deps.metrics.histogram('portico_mcp_call_duration_seconds', 'Duration of MCP tool calls, resource reads and prompt gets by product, kind and outcome');
    const { stats } = this.audit;
    deps.metrics.collectedCounter('portico_audit_records_total', 'Audit records of reads and refusals committed by the group commit', () => [[{}, stats.records]]);
    deps.metrics.collectedCounter('portico_audit_batches_total', 'Group-commit batches by path: statement (one statement on known heads, PostgreSQL), transaction (the head lock), retried (record by record after a failure)', () => [
      [{ path: 'statement' }, stats.statement], [{ path: 'transaction' }, stats.transaction], [{ path: 'retried' }, stats.retried],
    ]);
    const ms = deps.config.toolTimeoutMs;
    this.deadlines = new Deadlines(ms, (cancellation) =>
      cancellation.abort(new AppError('timeout', `the call took longer than ${ms} ms and was stopped; nothing was changed`)));
  }

  /** Waits until every queued audit record is committed (shutdown). */
  async close(): Promise<void> {
    await this.audit.flush();
  }

  resourceOf(productId: string): string {
    return `${this.deps.config.mcpUrl}/${productId}`;
  }

  compiled(toolName: string): CompiledTool | undefined {
    return this.tools.get(toolName);
  }

  // ------------------------------------------------------------------ step 1

  /** Token → live grant for exactly this product's resource (RFC 8707 audience). */
  async authenticate(token: string | undefined, productId: string): Promise<Principal> {
    if (!token) throw new AppError('invalid_token', 'a bearer token is required');
    const resource = this.resourceOf(productId);
    const cache = this.deps.principals;
    if (!cache || token.length > 512) return this.admitRole(productId, await authenticateBearer(this.reads, token, resource));
    const key = PrincipalCache.key(token, resource);
    const now = Date.now();
    const cached = cache.get(key, now);
    if (cached) return this.admitRole(productId, cached);
    const mark = cache.mark();
    const principal = await authenticateBearer(this.reads, token, resource, now);
    cache.set(key, principal, principal.tokenId, mark, now);
    return this.admitRole(productId, principal);
  }

  /**
   * A product only administrators may connect (ProductDefinition.connectableBy) serves a connection
   * only while its person is still one: a demotion revokes such connections (`member role`), and
   * this holds even for one made in the moment before the demotion committed.
   */
  private admitRole(productId: string, principal: Principal): Principal {
    if (principal.role !== 'admin' && this.deps.catalog.product(productId)?.connectableBy === 'admins') {
      throw new AppError('connection_revoked', 'only administrators may use this product, and the person behind this connection no longer is one');
    }
    return principal;
  }

  /**
   * A call refused at step 1 is audited in the log of the tenant the token belongs to, when the
   * token belongs to anyone (a token of another product, a revoked connection). Unknown tokens
   * leave no record: anyone could otherwise fill a tenant's log. `call` reads the refused message,
   * asked only once the token has an owner: the body of a caller nobody knows is never read.
   * `admit` is asked with the owner's connection before anything is written: a client that goes on
   * calling with a refused token is held to the connection's rate limit in the log too (its calls
   * are still refused).
   */
  async auditRefusedToken(
    token: string | undefined, productId: string, call: () => Promise<{ method: string; params: unknown } | undefined>,
    error: AppError, requestId: string, admit: (connectionId: string) => boolean,
  ): Promise<void> {
    if (!token) return;
    // On the read side, as authenticate read the token: a committed snapshot is all a label needs,
    // and a token nobody owns (anyone may send one) must not queue behind the writer.
    const owner = await findTokenOwner(this.reads, token);
    if (!owner) return;
    const refused = await call();
    const kind = METHOD_KIND[refused?.method as PipelineMethod];
    if (!refused || !kind || !admit(owner.connectionId)) return;
    const { name, args } = describeCall(refused.method as PipelineMethod, productId, refused.params);
    await this.auditAlone({
      tenantId: owner.tenantId, userId: owner.userId, clientId: owner.clientId, connectionId: owner.connectionId, product: productId,
      kind, name, args, outcome: error.code, durationMs: 0, requestId,
    }, false);
    this.count(productId, kind, error.code, 0);
  }

  // ------------------------------------------------------------------ steps 2-3

  /** The tool, if it exists on this live product and the grant's scopes allow it. */
  admitTool(productId: string, principal: Principal, name: string): CompiledTool {
    const compiled = this.tools.get(name);
    if (!compiled || compiled.product.id !== productId || !this.deps.isLive(productId)) {
      throw new AppError('unknown_tool', `no tool named "${String(name).slice(0, 100)}" on this server`);
    }
    this.requireScope(principal, compiled.tool.scope);
    return compiled;
  }

  private requireScope(principal: Principal, scope: string): void {
    if (!principal.scopes.has(scope)) {
      throw new AppError('insufficient_scope', `this connection lacks the scope ${scope}`, { details: { scope } });
    }
  }

  /**
   * Steps 2-3 for any pipeline method, before the message reaches the MCP SDK, so that the host
   * can answer a refusal with its real HTTP status (403). A refusal is audited here, once.
   */
  async precheck(productId: string, principal: Principal, method: string, params: unknown, requestId: string): Promise<AppError | undefined> {
    const kind = METHOD_KIND[method as PipelineMethod];
    if (!kind) return undefined;
    try {
      const p = (params ?? {}) as Record<string, unknown>;
      const named = method === 'resources/read' ? 'uri' : 'name';
      if (typeof p[named] !== 'string') throw new AppError('invalid_arguments', `invalid params: params.${named}: must be a string`, { details: { field: `params.${named}` } });
      if (method === 'tools/call') this.admitTool(productId, principal, String(p.name ?? ''));
      else if (method === 'resources/read') this.admitResource(productId, principal, String(p.uri ?? ''));
      else this.admitPrompt(productId, principal, String(p.name ?? ''));
      // The SDK would refuse these shapes itself, but unaudited and without naming the field.
      const args = p.arguments;
      if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) {
        throw new AppError('invalid_arguments', 'invalid arguments: (arguments): must be an object', { details: { field: '(arguments)' } });
      }
      if (method === 'prompts/get' && args) {
        const field = Object.entries(args as Record<string, unknown>).find(([, value]) => typeof value !== 'string')?.[0];
        if (field) throw new AppError('invalid_arguments', `invalid arguments: ${field}: prompt arguments are strings`, { details: { field } });
      }
      return undefined;
    } catch (thrown) {
      const error = toAppError(thrown);
      await this.auditRefusal(principal, productId, method, params, error, requestId);
      return error;
    }
  }

  /** One record for a call refused before it ran (steps 2-4, or the connection's rate limit). */
  async auditRefusal(principal: Principal, productId: string, method: string, params: unknown, error: AppError, requestId: string): Promise<void> {
    const kind = METHOD_KIND[method as PipelineMethod];
    if (!kind) return;
    const { name, args } = describeCall(method as PipelineMethod, productId, params);
    await this.auditAlone(this.auditInput(principal, productId, kind, name, args, error.code, 0, requestId), true);
    this.count(productId, kind, error.code, 0);
  }

  // ------------------------------------------------------------------ listings (filtered by scope)

  visibleTools(productId: string, principal: Principal) {
    const product = this.deps.catalog.product(productId);
    if (!product || !this.deps.isLive(productId)) return [];
    return product.tools
      .filter((tool) => principal.scopes.has(tool.scope))
      .map((tool) => {
        const compiled = this.tools.get(tool.name)!;
        return { name: tool.name, title: tool.title, description: tool.description, inputSchema: compiled.inputSchema, annotations: compiled.annotations };
      });
  }

  visibleResourceTemplates(productId: string, principal: Principal) {
    const product = this.deps.catalog.product(productId);
    if (!product || !this.deps.isLive(productId)) return [];
    return product.resources
      .filter((resource) => principal.scopes.has(resource.scope))
      .map((resource) => ({
        uriTemplate: this.resourceUri(productId, resource.collection, '{id}'),
        name: `${productId}.${resource.collection}`,
        title: resource.title,
        description: resource.description,
        mimeType: resource.mimeType ?? 'application/json',
      }));
  }

  visiblePrompts(productId: string, principal: Principal) {
    const product = this.deps.catalog.product(productId);
    if (!product || !this.deps.isLive(productId)) return [];
    return product.prompts
      .filter((prompt) => principal.scopes.has(prompt.scope))
      .map((prompt) => ({
        name: prompt.name,
        title: prompt.title,
        description: prompt.description,
        arguments: Object.entries(prompt.args).map(([name, schema]) => ({
          name,
          description: (schema as { description?: string }).description,
          required: !(schema as { isOptional(): boolean }).isOptional(),
        })),
      }));
  }

  resourceUri(productId: string, collection: string, id: string): string {
    return `${this.deps.config.resourceUriScheme}://${productId}/${collection}/${id}`;
  }

  // ------------------------------------------------------------------ tools/call

  async callTool(productId: string, principal: Principal, name: string, rawArgs: unknown, options: CallOptions): Promise<ToolResult> {
    const started = performance.now();
    const recordId = uuidv7();
    const product = this.deps.catalog.product(productId)!;
    let auditName = String(name).slice(0, 200);
    try {
      const { tool } = this.admitTool(productId, principal, name);
      auditName = tool.name;
      const args = parseArguments<Record<string, unknown>>(this.tools.get(tool.name)!.schema, rawArgs);
      const { confirmed, ...toolArgs } = args;
      let confirmedByPerson = false;

      if (tool.destructive && options.askPerson) {
        // Refuse a foreign or unknown reference, or a call the tool would refuse anyway, before asking anyone to confirm anything.
        const scope = new TenantScope(this.deps.db, principal.tenant.id);
        await this.checkReferences(product, scope, toolArgs);
        await this.checkBeforeConfirmation(tool, product, scope, principal, toolArgs, options);
        const answer = await options.askPerson(this.confirmationSentence(tool.confirmation, toolArgs));
        // No answer to be had from the client: confirmed as if it had not declared elicitation (below).
        confirmedByPerson = answer === true;
        if (answer === false) {
          const result = errorResult('confirmation_declined', 'The person declined; nothing was changed.', {});
          await this.auditAlone(this.auditInput(principal, productId, 'tool', tool.name, toolArgs, 'confirmation_declined', performance.now() - started, options.requestId, recordId), true);
          this.count(productId, 'tool', 'confirmation_declined', performance.now() - started);
          return result;
        }
      }

      if (isReadOnly(tool)) {
        // A read changes nothing, so nothing needs rolling back: its record joins the next group
        // commit, and the reply waits until that record is durable (docs/performance.md).
        const scope = new TenantScope(this.reads, principal.tenant.id);
        await this.checkReferences(product, scope, toolArgs);
        const returned = await this.withTimeout((cancellation) => callHandler(tool.handler, toolArgs, this.context(scope, product, principal, options, cancellation)), options);
        await this.audit.append({ ...this.auditInput(principal, productId, 'tool', tool.name, toolArgs, 'ok', performance.now() - started, options.requestId, recordId), touch: true });
        this.count(productId, 'tool', 'ok', performance.now() - started);
        return successResult(returned);
      }

      const { value, outcome } = await this.deps.db.transaction(async (trx): Promise<Outcome<ToolResult>> => {
        const scope = new TenantScope(trx, principal.tenant.id);
        await this.checkReferences(product, scope, toolArgs);
        if (tool.destructive && !confirmedByPerson) {
          const key = { connectionId: principal.connectionId, tool: tool.name, argsHash: sha256Hex(canonicalJson(toolArgs)) };
          // `confirmed: true` without a matching pending confirmation is a first call (DESIGN.md §6 step 5).
          const consumed = confirmed === true && (await consumeConfirmation(trx, key));
          if (!consumed) {
            await this.checkBeforeConfirmation(tool, product, scope, principal, toolArgs, options);
            const pending = await createConfirmation(trx, { ...key, tenantId: principal.tenant.id, userId: principal.user.id });
            const result = this.confirmationResult(tool.name, tool.confirmation, toolArgs, pending.expiresAt);
            await this.auditIn(trx, this.auditInput(principal, productId, 'tool', tool.name, toolArgs, 'confirmation_required', performance.now() - started, options.requestId, recordId));
            return { value: result, outcome: 'confirmation_required' };
          }
        }
        const returned = await this.withTimeout((cancellation) => callHandler(tool.handler, toolArgs, this.context(scope, product, principal, options, cancellation)), options);
        await this.auditIn(trx, this.auditInput(principal, productId, 'tool', tool.name, toolArgs, 'ok', performance.now() - started, options.requestId, recordId));
        return { value: successResult(returned), outcome: 'ok' };
      });
      this.count(productId, 'tool', outcome, performance.now() - started);
      return value;
    } catch (thrown) {
      const error = await this.failed(thrown, principal, productId, 'tool', auditName, rawArgs, started, options.requestId, recordId);
      if (isToolResultError(error)) return errorResult(error.code, error.message, error.details ?? {});
      throw error;
    }
  }

  // ------------------------------------------------------------------ resources/read

  private admitResource(productId: string, principal: Principal, uri: string): { resource: ResourceDefinition<any>; id: string } {
    const product = this.deps.catalog.product(productId);
    const parsed = this.parseResourceUri(uri);
    const resource = parsed && parsed.product === productId && this.deps.isLive(productId) ? product?.resources.find((r) => r.collection === parsed.collection) : undefined;
    if (!parsed || !resource) throw new AppError('not_found', `no resource ${String(uri).slice(0, 200)} on this server`, { details: { uri: String(uri).slice(0, 500) } });
    this.requireScope(principal, resource.scope);
    return { resource, id: parsed.id };
  }

  /**
   * `scheme://product/collection/id`. The scheme and the product (the URI's host) are read in any
   * case, as RFC 3986 §6.2.2.1 compares them; the collection and the id are a path, compared exactly.
   */
  parseResourceUri(uri: string): { product: string; collection: string; id: string } | undefined {
    const prefix = `${this.deps.config.resourceUriScheme}://`;
    if (typeof uri !== 'string' || uri.length > 500 || uri.slice(0, prefix.length).toLowerCase() !== prefix) return undefined;
    const match = /^([A-Za-z][A-Za-z0-9]*)\/([a-z][a-z0-9_]*)\/([^/?#]+)$/.exec(uri.slice(prefix.length));
    return match ? { product: match[1].toLowerCase(), collection: match[2], id: match[3] } : undefined;
  }

  async readResource(productId: string, principal: Principal, uri: string, options: CallOptions) {
    const started = performance.now();
    const recordId = uuidv7();
    const product = this.deps.catalog.product(productId)!;
    const { name } = describeCall('resources/read', productId, { uri });
    const args = { uri: String(uri).slice(0, 500) };
    try {
      const { resource, id } = this.admitResource(productId, principal, uri);
      // Reading changes nothing: no transaction to roll back, the record joins the next group commit.
      const scope = new TenantScope(this.reads, principal.tenant.id);
      const value = await this.withTimeout((cancellation) => callReader(resource, id, this.context(scope, product, principal, options, cancellation)), options);
      await this.audit.append({ ...this.auditInput(principal, productId, 'resource', name, args, 'ok', performance.now() - started, options.requestId, recordId), touch: true });
      this.count(productId, 'resource', 'ok', performance.now() - started);
      const mimeType = resource.mimeType ?? 'application/json';
      return { contents: [{ uri, mimeType, text: typeof value === 'string' ? value : JSON.stringify(value) }] };
    } catch (thrown) {
      const error = await this.failed(thrown, principal, productId, 'resource', name, args, started, options.requestId, recordId);
      // MCP's resource-not-found error (-32002) names the URI in its data, as the specification's example does.
      if (error.code === 'not_found') throw new AppError('not_found', error.message, { details: { ...error.details, uri: args.uri }, cause: error });
      throw error;
    }
  }

  // ------------------------------------------------------------------ prompts/get

  private admitPrompt(productId: string, principal: Principal, name: string): PromptDefinition<any, any> {
    const prompt = this.deps.isLive(productId) ? this.deps.catalog.product(productId)?.prompts.find((p) => p.name === name) : undefined;
    if (!prompt) throw new AppError('not_found', `no prompt named "${String(name).slice(0, 100)}" on this server`);
    this.requireScope(principal, prompt.scope);
    return prompt;
  }

  async getPrompt(productId: string, principal: Principal, name: string, rawArgs: unknown, options: CallOptions) {
    const started = performance.now();
    const recordId = uuidv7();
    const product = this.deps.catalog.product(productId)!;
    try {
      const prompt = this.admitPrompt(productId, principal, name);
      const args = parseArguments<Record<string, unknown>>(this.promptSchemas.get(prompt.name)!, rawArgs);
      // Building a prompt reads: no transaction to roll back, the record joins the next group commit.
      const scope = new TenantScope(this.reads, principal.tenant.id);
      await this.checkReferences(product, scope, args);
      const messages = await this.withTimeout((cancellation) => callPrompt(prompt, args, this.context(scope, product, principal, options, cancellation)), options);
      await this.audit.append({ ...this.auditInput(principal, productId, 'prompt', prompt.name, args, 'ok', performance.now() - started, options.requestId, recordId), touch: true });
      this.count(productId, 'prompt', 'ok', performance.now() - started);
      return { description: prompt.description, messages };
    } catch (thrown) {
      throw await this.failed(thrown, principal, productId, 'prompt', String(name).slice(0, 200), rawArgs, started, options.requestId, recordId);
    }
  }

  // ------------------------------------------------------------------ shared steps

  /** Step 4b: every `<entity>_id` argument names a record of the grant's tenant. */
  private async checkReferences(product: ProductDefinition<any>, scope: TenantScope, args: Record<string, unknown>): Promise<void> {
    for (const key in args) {
      const value = args[key];
      if (!key.endsWith('_id') || typeof value !== 'string') continue;
      const entity = key.slice(0, -3);
      const table = product.entities?.[entity];
      if (table) await scope.require(table, value, entity.replace(/_/g, ' '));
    }
  }

  /**
   * Step 5, before a person is asked: a call the tool would refuse anyway (ToolDefinition.check)
   * is refused now, with the tool's own error, instead of asking to confirm what cannot happen.
   */
  private async checkBeforeConfirmation(tool: ToolDefinition<any, any>, product: ProductDefinition<any>, scope: TenantScope, principal: Principal, args: Record<string, unknown>, options: CallOptions): Promise<void> {
    if (!tool.check) return;
    await this.withTimeout((cancellation) => callCheck(tool, args, this.context(scope, product, principal, options, cancellation)), options);
  }

  private context(scope: TenantScope, product: ProductDefinition<any>, principal: Principal, options: CallOptions, cancellation: Cancellation): ToolContext<unknown> {
    return {
      repos: product.repositories ? product.repositories(scope) : scope,
      tenant: principal.tenant,
      user: principal.user,
      connection: { id: principal.connectionId, clientId: principal.clientId, scopes: principal.scopes },
      requestId: options.requestId,
      resourceUri: (collection, id) => this.resourceUri(product.id, collection, id),
      // Made only if the handler reads it (Cancellation).
      get signal() {
        return cancellation.signal;
      },
    };
  }

  /**
   * Runs `work` under the tool time-out; its cancellation (and the signal a handler may read from
   * it) aborts when time is up or the client left, and the call fails as soon as it does, with
   * the cancellation's reason when that is an AppError (`connection_revoked`). A cancellation the
   * caller made for this call is used as it is.
   */
  private async withTimeout<T>(work: (cancellation: Cancellation) => Promise<T>, options: CallOptions): Promise<T> {
    const cancellation = options.cancellation ?? new Cancellation();
    this.deadlines.start(cancellation);
    let stopListening: (() => void) | undefined;
    try {
      return await new Promise<T>((resolve, reject) => {
        // Listeners run before the handler's signal aborts: the call fails as timed out (or
        // cancelled), whatever the abort then sets off in the handler.
        stopListening = cancellation.onAbort((reason) => reject(reason instanceof AppError ? reason : cancelledError()));
        work(cancellation).then(resolve, reject);
      });
    } finally {
      stopListening?.();
      this.deadlines.end(cancellation);
    }
  }

  private confirmationSentence(template: string | undefined, args: Record<string, unknown>): string {
    const text = (template ?? 'This action cannot be undone.').replace(/\{([a-z_]+)\}/g, (whole, key: string) =>
      args[key] === undefined ? whole : String(args[key]).slice(0, 200));
    return text;
  }

  private confirmationResult(toolName: string, template: string | undefined, args: Record<string, unknown>, expiresAt: number): ToolResult {
    const sentence = this.confirmationSentence(template, args);
    const minutes = Math.round(CONFIRMATION_TTL_MS / 60_000);
    const message =
      `Confirmation required: ${sentence} Nothing has been changed yet. Show this to the person; if they agree, ` +
      `call ${toolName} again with the same arguments plus "confirmed": true within ${minutes} minutes.`;
    return errorResult('confirmation_required', message, {
      will_destroy: sentence,
      confirm_with: { tool: toolName, arguments: { ...args, confirmed: true } },
      expires_at: new Date(expiresAt).toISOString(),
    });
  }

  /**
   * `id`: the call's record id (callTool, readResource, getPrompt), made as the call starts. Its
   * success and its failure are one record: a failure after an attempt whose outcome was lost (a
   * COMMIT whose answer never came) is recorded under the same id, and the log keeps the first.
   */
  private auditInput(principal: Principal, productId: string, kind: AuditKind, name: string, args: unknown, outcome: string, durationMs: number, requestId: string, id?: string) {
    return {
      tenantId: principal.tenant.id, userId: principal.user.id, clientId: principal.clientId, connectionId: principal.connectionId, product: productId,
      kind, name, args, outcome, durationMs: Math.round(durationMs), requestId, id,
    };
  }

  /**
   * The audit record of a call, inside the call's own transaction, with the connection's use
   * (the connection row first, the chain head second: the order revokeConnection locks them in).
   * Touching the connection is the call's commit point: a connection revoked since the call was
   * admitted (on any instance, heard of here or not) fails the call and nothing persists.
   */
  private async auditIn(trx: DbOrTrx, input: Parameters<typeof appendAudit>[1]): Promise<void> {
    if (input.connectionId) await touchLiveConnection(trx, input.connectionId);
    await appendAudit(trx, input);
  }

  /** The audit record of a refused or failed call, in a transaction of its own (after any rollback): group-committed, durable when this resolves. */
  private async auditAlone(input: Parameters<typeof appendAudit>[1], touch: boolean): Promise<void> {
    await this.audit.append({ ...input, touch });
  }

  /**
   * A call failed and its transaction rolled back: record the outcome, then report it. If even
   * that record cannot be written, the call fails as `internal` (nothing it did persists). The
   * record takes the call's record id: when what failed was the writing of the call's own record,
   * and it was written after all (its answer lost), that record stays the call's only one.
   */
  private async failed(thrown: unknown, principal: Principal, productId: string, kind: AuditKind, name: string, args: unknown, started: number, requestId: string, recordId: string): Promise<AppError> {
    // A lost or locked database is `unavailable` (503, retryable; docs/errors.md), not an internal
    // error; a read PostgreSQL cancelled for running too long (DATABASE_READ_TIMEOUT_MS) is a time-out.
    // A constraint a handler did not expect is a call racing another on the same records (a message
    // added to a conversation deleted meanwhile, two numbers taken at once): a domain error, not `internal`.
    const error = isUnavailable(thrown) ? unavailable(thrown)
      : isCancelledStatement(thrown) ? statementTimedOut(thrown)
      : translateDbError(thrown, RACED);
    if (error.status >= 500) this.deps.log.error('mcp call failed', { request_id: requestId, product: productId, kind, name, err: thrown });
    // A deadlock answers `conflict`, which is the caller's to retry; the operator still hears of it: two paths lock in different orders.
    else if (isWriteClash(thrown)) this.deps.log.warn('mcp call ended by PostgreSQL to break a deadlock or serialization failure', { request_id: requestId, product: productId, kind, name, err: thrown });
    const duration = performance.now() - started;
    try {
      await this.auditAlone(this.auditInput(principal, productId, kind, name, args, error.code, duration, requestId, recordId), true);
    } catch (auditError) {
      this.deps.log.error('audit write failed', { request_id: requestId, product: productId, kind, name, err: auditError });
      const failure = isUnavailable(auditError) ? unavailable(auditError) : new AppError('internal', 'internal error', { cause: auditError });
      this.count(productId, kind, failure.code, duration);
      return failure;
    }
    this.count(productId, kind, error.code, duration);
    return error;
  }

  private count(product: string, kind: AuditKind, outcome: string, durationMs: number): void {
    const labels = { kind, outcome, product }; // in name order (shared/metrics.ts labelKey)
    this.calls.inc(labels);
    this.durations.observe(labels, durationMs / 1000);
  }
}

/**
 * A tool that only reads: declared non-destructive with a read scope (`<product>.<area>.read`).
 * Such a tool must not write; its record is group-committed after it ran (docs/performance.md).
 */
function isReadOnly(tool: Pick<ToolDefinition<any, any>, 'scope' | 'destructive'>): boolean {
  return !tool.destructive && tool.scope.endsWith('.read');
}

/** What a constraint violation that no handler translated means to the caller (Pipeline.failed). */
const RACED = {
  missing: 'a record this call refers to was deleted by another call at the same time; nothing was changed',
  conflict: 'another call changed the same records at the same time; nothing was changed, read them again and retry',
};

function unavailable(cause: unknown): AppError {
  return new AppError('unavailable', 'the database is unavailable; nothing was changed, try again', { cause });
}

/** What a refused call is audited as: the tool or prompt name, or the resource's collection. */
function describeCall(method: PipelineMethod, productId: string, params: unknown): { name: string; args: unknown } {
  const p = (params && typeof params === 'object' ? params : {}) as Record<string, unknown>;
  if (method === 'resources/read') {
    const uri = String(p.uri ?? '').slice(0, 500);
    const collection = /^[^:]+:\/\/[A-Za-z0-9]+\/([a-z][a-z0-9_]*)\//.exec(uri)?.[1];
    // Cut as a tool's name is: the audit log's name column holds 200 (PostgreSQL refuses more, and
    // the call would then fail with no record at all).
    return { name: (collection ? `${productId}.${collection}` : `${productId}.resource`).slice(0, 200), args: { uri } };
  }
  return { name: String(p.name ?? '').slice(0, 200) || method, args: p.arguments };
}

// The call sites of product code. Handlers are invoked here and nowhere else.
function callHandler(handler: (args: any, context: ToolContext<any>) => Promise<unknown>, args: Record<string, unknown>, context: ToolContext<unknown>) {
  return handler(args, context);
}

function callCheck(tool: ToolDefinition<any, any>, args: Record<string, unknown>, context: ToolContext<unknown>) {
  return tool.check!(args, context);
}

function callReader(resource: ResourceDefinition<any>, id: string, context: ToolContext<unknown>) {
  return resource.read(id, context);
}

function callPrompt(prompt: PromptDefinition<any, any>, args: Record<string, unknown>, context: ToolContext<unknown>) {
  return prompt.get(args, context);
}

/** The JSON of each success result's structured content, as its text block carries it (resultJson). */
const structuredJson = new WeakMap<object, string>();

export function successResult(value: unknown): ToolResult {
  const structured = value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { result: value ?? null };
  const text = JSON.stringify(structured);
  const result: ToolResult = { content: [{ type: 'text', text }], structuredContent: structured };
  structuredJson.set(result, text);
  return result;
}

/**
 * A result as JSON (undefined for undefined, as JSON.stringify gives). A tool's success result
 * whose text block still carries its structured content's JSON reuses that JSON for
 * `structuredContent`: the largest part of a reply is serialised once, not twice.
 */
export function resultJson(result: unknown): string | undefined {
  const json = result && typeof result === 'object' ? structuredJson.get(result) : undefined;
  if (json === undefined || !carries(result as ToolResult, json)) return JSON.stringify(result);
  return `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}}`;
}

/** successResult's shape, untouched since: content and structuredContent only, one text block holding `json`. */
function carries(result: ToolResult, json: string): boolean {
  const keys = Object.keys(result);
  if (keys.length !== 2 || !('content' in result) || !('structuredContent' in result) || result.content.length !== 1) return false;
  const block = result.content[0];
  return block.type === 'text' && block.text === json && Object.keys(block).length === 2;
}

function errorResult(code: string, message: string, extra: Record<string, unknown>): ToolResult {
  const structured = { code, message, ...extra };
  return { content: [{ type: 'text', text: message }], structuredContent: structured, isError: true };
}

function cancelledError(): AppError {
  return new AppError('timeout', 'the request was cancelled; nothing was changed');
}
