/**
 * A real Portico with every product plus `faultlab`, a test product whose tools wait at a gate
 * the test controls before they write or read their marker rows. That is how a fault (a killed
 * database connection, a held lock, a revocation) lands exactly in the middle of a call, without mocks.
 */
import { z } from 'zod';
import type { Mount } from '../../app.js';
import type { TenantScope } from '../../db/tenant_scope.js';
import { PRODUCTS } from '../../mcp/products/index.js';
import { defineProduct, defineTool, type ToolContext } from '../../shared/catalog.js';
import type { DbKind, TestDatabase } from '../helpers/db.js';
import { startMcpServer, type McpTestServer } from '../helpers/mcp.js';

interface Gate {
  entered: Promise<void>;
  release(): void;
  enter(signal: AbortSignal): void;
  opened: Promise<void>;
  /** The handler's signal, once it reached the gate. */
  signal?: AbortSignal;
}

const gates = new Map<string, Gate>();

/** A gate for the marker `name`: the call stops there until release(). */
export function gate(name: string): Pick<Gate, 'entered' | 'release' | 'signal'> {
  let entered!: () => void;
  let release!: () => void;
  const created: Gate = {
    entered: new Promise<void>((resolve) => (entered = resolve)),
    opened: new Promise<void>((resolve) => (release = resolve)),
    enter(signal) {
      created.signal = signal;
      entered();
    },
    release: () => release(),
  };
  gates.set(name, created);
  return created;
}

/** Inside a handler: waits at the gate of marker `name`, if the test set one. */
async function passGate(name: string, signal: AbortSignal): Promise<void> {
  const waiting = gates.get(name);
  if (!waiting) return;
  waiting.enter(signal);
  await waiting.opened;
}

/** Both marker-writing tools: wait at the gate named like the marker (if a test set one), then write it. */
async function writeMarker({ name }: { name: string }, { repos, signal }: ToolContext<TenantScope>) {
  await passGate(name, signal);
  await repos.insert('faultlab_markers', { name, created_at: Date.now() });
  return { name, written: true };
}

export const faultlab = defineProduct<TenantScope>({
  id: 'faultlab',
  title: 'Fault lab',
  kind: 'test',
  status: 'live',
  scopes: { 'faultlab.markers.write': 'Write test markers', 'faultlab.markers.read': 'Read test markers' },
  tools: [
    defineTool<{ name: z.ZodString }, TenantScope>({
      name: 'faultlab.write_marker',
      title: 'Write a marker',
      description: 'Test tool: waits at the gate named like the marker (if the test set one), then writes one marker row in the caller’s tenant.',
      scope: 'faultlab.markers.write',
      destructive: false,
      input: { name: z.string().min(1).max(100) },
      handler: writeMarker,
    }),
    defineTool<{ name: z.ZodString }, TenantScope>({
      name: 'faultlab.write_marker_confirmed',
      title: 'Write a marker, once confirmed',
      description: 'Test tool: as write_marker, declared destructive, so it asks the person first (a client with elicitation is asked through the SDK, which then runs the call).',
      scope: 'faultlab.markers.write',
      destructive: true,
      confirmation: 'A marker {name} will be written.',
      input: { name: z.string().min(1).max(100) },
      handler: writeMarker,
    }),
    defineTool<{ name: z.ZodString }, TenantScope>({
      name: 'faultlab.read_markers',
      title: 'Read markers',
      description: 'Test tool: waits at the gate named like the marker (if the test set one), then counts the marker rows of that name in the caller’s tenant. A read: on SQLite it holds no writer while it waits.',
      scope: 'faultlab.markers.read',
      destructive: false,
      input: { name: z.string().min(1).max(100) },
      async handler({ name }, { repos, signal }) {
        await passGate(name, signal);
        const rows = await repos.select('faultlab.read_markers', { name }, (template, v) =>
          template.from('faultlab_markers').where('faultlab_markers.name', v.name).select('faultlab_markers.name'));
        return { name, count: rows.length };
      },
    }),
    defineTool<{ seconds: z.ZodNumber }, TenantScope>({
      name: 'faultlab.slow_read',
      title: 'Read slowly',
      description: 'Test tool (PostgreSQL): a query template over the caller’s markers that sleeps `seconds` in PostgreSQL once there is a marker.',
      scope: 'faultlab.markers.read',
      destructive: false,
      input: { seconds: z.number().min(0).max(10) },
      async handler({ seconds }, { repos }) {
        const rows = await repos.select('faultlab.slow_read', { seconds }, (template, v) =>
          template.from('faultlab_markers').select('faultlab_markers.name', template.db.raw('pg_sleep(?) as slept', [v.seconds])).limit(1));
        return { rows: rows.length };
      },
    }),
  ],
  resources: [],
  prompts: [],
});

/** Creates faultlab's table (tests only; the product is not in PRODUCTS, so it has no migration). */
const faultlabTable: Mount = async (_app, { db }) => {
  if (await db.schema.hasTable('faultlab_markers')) return;
  await db.schema.createTable('faultlab_markers', (table) => {
    table.string('id', 36).primary();
    table.string('tenant_id', 36).notNullable();
    table.string('name', 100).notNullable();
    table.bigInteger('created_at').notNullable();
  });
};

export interface FaultServer extends McpTestServer {
  markers(name?: string): Promise<Array<{ name: string; tenant_id: string }>>;
}

/** startMcpServer's world (acme, globex, demo rows) plus faultlab; `database` may carry a PostgreSQL application_name. */
export async function startFaultServer(kind: DbKind, options: { env?: Record<string, string>; database?: TestDatabase } = {}): Promise<FaultServer> {
  const server = await startMcpServer(kind, { ...options, products: [...PRODUCTS, faultlab], before: [faultlabTable] });
  return Object.assign(server, {
    markers: (name?: string) => (name ? server.db('faultlab_markers').where({ name }) : server.db('faultlab_markers')).select('name', 'tenant_id'),
  });
}
