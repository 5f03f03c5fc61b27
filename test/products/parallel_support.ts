/**
 * Support for the tests of product writes racing each other: calls through a real MCP SDK client
 * that report their outcome (success, a tool result error or a JSON-RPC error) instead of throwing,
 * the confirmation protocol of destructive tools split in two, so that the confirmed call can
 * be sent at the same time as other calls, and (PostgreSQL) calls lined up behind a held row.
 */
import type { ExecutionContext } from 'ava';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import { holdRow } from '../helpers/db.js';
import { connect, type Connected, type GrantOptions, type McpTestServer } from '../helpers/mcp.js';

export interface Outcome {
  ok: boolean;
  /** The error code: a tool result's, or a JSON-RPC error's data.code; undefined on success. */
  code?: string;
  value: any;
}

/**
 * `n` connections with the same grant: the calls of one connection take turns at its row (the
 * pipeline's commit point), so calls meant to race each get their own.
 */
export function connections(server: McpTestServer, options: GrantOptions, n: number): Promise<Connected[]> {
  return Promise.all(Array.from({ length: n }, () => connect(server, options)));
}

export async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Outcome> {
  try {
    const result = await client.callTool({ name, arguments: args });
    const value = result.structuredContent as any;
    return result.isError ? { ok: false, code: value?.code, value } : { ok: true, value };
  } catch (error) {
    const data = (error as McpError & { data?: { code?: string } }).data;
    return { ok: false, code: data?.code ?? 'thrown', value: { message: (error as Error).message } };
  }
}

/**
 * Asks for the confirmation of a destructive call and returns the confirmed call, not yet sent:
 * the caller sends it when it chooses (in parallel with others).
 */
export async function confirmation(client: Client, name: string, args: Record<string, unknown>): Promise<() => Promise<Outcome>> {
  const first = await call(client, name, args);
  if (first.code !== 'confirmation_required') throw new Error(`${name} did not ask for confirmation: ${JSON.stringify(first)}`);
  return () => call(client, name, { ...args, confirmed: true });
}

/** The outcomes that are neither a success nor one of the `allowed` domain errors. */
export function unexpected(outcomes: Outcome[], allowed: string[]): Outcome[] {
  return outcomes.filter((o) => !o.ok && !allowed.includes(o.code ?? ''));
}

/**
 * PostgreSQL: sends the calls one after another, each once the ones before it wait for the held
 * row, then releases it: they run in that order, each on the row as the one before committed it.
 */
export async function inLine(t: ExecutionContext, db: Knex, table: string, id: string, calls: Array<() => Promise<Outcome>>): Promise<Outcome[]> {
  const held = await holdRow(db, table, id);
  const outcomes: Array<Promise<Outcome>> = [];
  try {
    for (const send of calls) {
      outcomes.push(send());
      t.true(await held.waiting(outcomes.length), `call ${outcomes.length} reached the held row`);
    }
  } finally {
    await held.release();
  }
  return Promise.all(outcomes);
}
