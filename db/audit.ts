/**
 * The one audit repository, shared by auth/, mcp/ and the console.
 *
 * Every record is chained to the previous record of its tenant: hash = sha256(prev_hash + canonical
 * record), so an export can be verified offline. Appending takes the chain head under a row lock
 * (PostgreSQL) or the database's write lock (SQLite); the caller's transaction makes record and effect atomic.
 */
import { hash } from 'node:crypto';
import { auditPipeOf, knexSql, writeTransaction, type Db, type DbOrTrx, type SqlRunner } from './connect.js';
import type { PgPipe } from './pg_client.js';
import { isUnavailable, isUniqueViolation } from './errors.js';
import { uuidv7 } from './ids.js';
import { decodeCursor, newestFirstPage, type KeysetCursor, type KeysetPage } from './keyset.js';

export const AUDIT_KINDS = ['tool', 'resource', 'prompt', 'auth', 'admin'] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];
const SYSTEM_CHAIN = '_system';
export const GENESIS_HASH = '0'.repeat(64);

export interface AuditInput {
  tenantId: string | null;
  userId?: string | null;
  clientId?: string | null;
  connectionId?: string | null;
  product?: string | null;
  kind: AuditKind;
  name: string;
  args?: unknown;
  outcome: string;
  durationMs?: number | null;
  requestId?: string | null;
  time?: number;
  /**
   * The record's id, when the caller made it: a call's record written again (its first write's
   * outcome unknown) keeps its id, and the log's primary key then holds it at most once.
   */
  id?: string;
}

export interface DbAuditRow {
  id: string;
  chain: string;
  seq: number;
  time: number;
  tenant_id: string | null;
  user_id: string | null;
  client_id: string | null;
  connection_id: string | null;
  product: string | null;
  kind: AuditKind;
  name: string;
  args_digest: string | null;
  args_redacted: string | null;
  outcome: string;
  duration_ms: number | null;
  request_id: string | null;
  prev_hash: string;
  hash: string;
}

const SECRET_KEY = /pass(word)?|pwd|secret|token|authorization|bearer|jwt|api[_-]?key|(private|signing|ssh|access)[_-]?key|cookies?$|verifier|credential/i;
const MAX_REDACTED_STRING = 200;

/** How many characters of names and values one record's stored arguments hold at most, in all. */
const MAX_REDACTED_TOTAL = 16 * 1024;

/**
 * Arguments as stored: secrets masked, long strings cut, names as well as values, and what is past
 * MAX_REDACTED_TOTAL left out (the caller writes all of it, up to the body limit, and the log is
 * never purged). The digest covers the full arguments.
 */
export function redactArguments(value: unknown, depth = 0, budget = { left: MAX_REDACTED_TOTAL }): unknown {
  if (depth > 6) return '[…]';
  if (typeof value === 'string') return cut(value, budget);
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (const item of value.slice(0, 20)) {
      if (budget.left <= 0) return [...items, '[…]'];
      items.push(redactArguments(item, depth + 1, budget));
    }
    return items;
  }
  if (value && typeof value === 'object') {
    const entries: Array<[string, unknown]> = [];
    for (const [k, v] of Object.entries(value).slice(0, 50)) {
      if (budget.left <= 0) return Object.fromEntries([...entries, ['…', '[…]']]);
      entries.push([cut(k, budget), SECRET_KEY.test(k) ? '[redacted]' : redactArguments(v, depth + 1, budget)]);
    }
    return Object.fromEntries(entries);
  }
  budget.left -= 8;
  return value;
}

function cut(text: string, budget: { left: number }): string {
  const kept = Math.max(0, Math.min(text.length, MAX_REDACTED_STRING, budget.left));
  budget.left -= kept + 4;
  return kept < text.length ? `${text.slice(0, kept)}…` : text;
}

/** JSON with sorted keys, so the same arguments always give the same digest. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function sha256Hex(text: string): string {
  // One-shot: half the cost of a Hash object for texts this short (two per call: arguments and record).
  return hash('sha256', text, 'hex');
}

const HASHED_FIELDS = ['id', 'chain', 'seq', 'time', 'tenant_id', 'user_id', 'client_id', 'connection_id', 'product', 'kind', 'name', 'args_digest', 'args_redacted', 'outcome', 'duration_ms', 'request_id'] as const;
/** The hashed fields in canonicalJson's key order, each with its `{"key":` or `,"key":` prefix. */
const HASH_KEYS = [...HASHED_FIELDS].sort().map((field, i) => [field, `${i ? ',' : '{'}${JSON.stringify(field)}:`] as const);

/**
 * sha256(prev_hash + canonicalJson of the hashed fields, absent ones as null). The fields are
 * scalars, so the canonical text is written directly, key by key in sorted order: the same text
 * canonicalJson produces (test/foundation/audit.test.ts checks it), without building an object.
 */
export function recordHash(row: Omit<DbAuditRow, 'hash'>): string {
  let text = row.prev_hash;
  for (const [field, prefix] of HASH_KEYS) text += prefix + scalarJson(row[field]);
  return sha256Hex(`${text}}`);
}

/** A string JSON writes as it is between quotes: no quote, backslash, control character or surrogate. */
const PLAIN_STRING = /^[^"\\\u0000-\u001f\ud800-\udfff]*$/;

/**
 * JSON.stringify of a record's field (absent as null), without a call into the JSON serialiser
 * for the common values: ids, names and digests are plain strings, times and counts finite
 * numbers. Sixteen such calls per record were ~1.6 % of a loaded server's CPU.
 */
function scalarJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return PLAIN_STRING.test(value) ? `"${value}"` : JSON.stringify(value);
  if (typeof value === 'number' && Number.isFinite(value)) return `${value}`;
  return typeof value === 'object' ? canonicalJson(value) : JSON.stringify(value);
}

export async function appendAudit(db: DbOrTrx, input: AuditInput): Promise<DbAuditRow> {
  // Head lock and head update must share a transaction, or two appends could take the same seq.
  if (!db.isTransaction) return db.transaction((trx) => appendAudit(trx, input));
  // A record alone counts no use of its connection (callers that want one write it themselves).
  const [row] = await writeBatchWith(knexSql(db), [{ ...input, touch: false }]);
  return row;
}

/**
 * Text as the database stores it: UTF-8 cannot hold a lone UTF-16 surrogate, which both SQLite
 * and PostgreSQL write as U+FFFD. A record is hashed over what is stored, or a caller's text (the
 * name of an unknown tool, cut at 200 code units in the middle of a pair) would make its record,
 * untouched, fail verification. U+0000, which PostgreSQL cannot store at all, is written as U+FFFD
 * on both databases.
 */
function storable<T extends string | null | undefined>(text: T): T {
  const value = text as (string & { isWellFormed(): boolean; toWellFormed(): string }) | null | undefined;
  if (typeof value !== 'string') return text;
  const wellFormed = value.isWellFormed() ? value : value.toWellFormed();
  // PostgreSQL refuses U+0000 in text: the record (of a call refused for its name) could not be written at all.
  return (wellFormed.includes('\u0000') ? wellFormed.replace(/\u0000/g, '\ufffd') : wellFormed) as T;
}

/** The next record of a chain after `head`, hashed. */
function buildRecord(input: AuditInput, chain: string, head: { seq: number; hash: string }): DbAuditRow {
  // The record's final shape from the start (hash last, as COLUMNS has it); recordHash skips `hash`.
  const row: DbAuditRow = {
    id: input.id ?? uuidv7(),
    chain,
    seq: head.seq + 1,
    time: input.time ?? Date.now(),
    tenant_id: input.tenantId,
    user_id: input.userId ?? null,
    client_id: storable(input.clientId ?? null),
    connection_id: input.connectionId ?? null,
    product: storable(input.product ?? null),
    kind: input.kind,
    name: storable(input.name),
    args_digest: input.args === undefined ? null : sha256Hex(canonicalJson(input.args)),
    args_redacted: input.args === undefined ? null : JSON.stringify(redactArguments(input.args)),
    outcome: storable(input.outcome),
    duration_ms: input.durationMs ?? null,
    request_id: storable(input.requestId ?? null),
    prev_hash: head.hash,
    hash: '',
  };
  row.hash = recordHash(row);
  return row;
}

async function saveHead(sql: SqlRunner, chain: string, head: { seq: number; hash: string }): Promise<void> {
  await sql.run('update audit_heads set seq = ?, hash = ? where chain = ?', [head.seq, head.hash, chain]);
}

async function lockHead(sql: SqlRunner, chain: string): Promise<{ seq: number; hash: string }> {
  // One round trip: create the head if missing, lock it and read it. ON CONFLICT DO UPDATE takes
  // the row lock on PostgreSQL. On SQLite, being a write, it takes the database's write lock at
  // once if the transaction does not hold it yet (writeTransaction begins IMMEDIATE; a knex
  // transaction begins deferred), instead of failing later to upgrade a read transaction.
  const [head] = await sql.all<HeadRow>(
    'insert into audit_heads (chain, seq, hash) values (?, 0, ?) on conflict (chain) do update set chain = excluded.chain returning seq, hash',
    [chain, GENESIS_HASH],
  );
  return { seq: Number(head.seq), hash: head.hash };
}

interface HeadRow {
  seq: number | string;
  hash: string;
}

/** A record to append through an AuditWriter; `touch` also counts the call as a use of its connection. */
export interface BatchedAudit extends AuditInput {
  touch?: boolean;
}

interface Pending {
  input: BatchedAudit;
  resolve(row: DbAuditRow): void;
  reject(error: unknown): void;
}

/** The columns of audit_log, in the order writeBatch binds them. */
const COLUMNS = ['id', 'chain', 'seq', 'time', 'tenant_id', 'user_id', 'client_id', 'connection_id', 'product', 'kind', 'name', 'args_digest', 'args_redacted', 'outcome', 'duration_ms', 'request_id', 'prev_hash', 'hash'] as const;
const COLUMN_LIST = COLUMNS.join(', ');

/** How many turns of the event loop a batch of audit records stays open (AuditWriter.next). */
const GATHER_TURNS = 3;

/**
 * Group commit of audit records (docs/performance.md). Records queued while one transaction
 * commits, or in the few turns of the event loop a new batch stays open (next), are appended
 * together in the next one: one head lock and one head update per chain,
 * the records inserted together (SqlRunner.insert), one use-count update per connection. `append`
 * resolves only after the transaction holding its record has committed, so a caller that waits
 * for it answers after its record is durable; a failed batch is retried record by record, so one
 * bad record fails only its own call. Chains and connections are locked in sorted order,
 * connections first (as revokeConnection does), so two instances' batches cannot deadlock each other.
 *
 * On PostgreSQL, where every statement is a round trip, a batch whose chains all have a head this
 * writer committed itself skips the transaction (BEGIN, uses, head locks, INSERT, head updates,
 * COMMIT): one statement (appendOnKnownHeads) moves each chain's head only from the value known
 * here, inserts the records of the chains it moved and counts their uses. A chain whose head
 * another writer moved first (another instance, or a record written inside a transaction) gets
 * nothing from it; its records take the transaction path, which reads the head under its lock.
 * One round trip and one commit (one WAL flush) per batch, however many tenants' records it
 * holds, while this writer is their chains' only one. These statements go on the audit pipe
 * (db/pg_client.ts PgPipe), and the next batch is written behind the one committing, built on
 * the heads that one leaves: PostgreSQL runs it the moment the first has committed. If the first
 * fails, the one behind finds its heads moved and comes back the same way.
 */
export class AuditWriter {
  /**
   * What this writer has committed, for /metrics: records, and batches by path (`statement`: one
   * statement on known heads, PostgreSQL; `transaction`: the locking transaction; `retried`: a
   * failed batch written again record by record).
   */
  readonly stats = { records: 0, statement: 0, transaction: 0, retried: 0 };
  private queue: Pending[] = [];
  /** A batch is being gathered (next). */
  private gathering = false;
  /** Batches sent and not yet settled, and of them those on the transaction path. */
  private writing = 0;
  private inTransactions = 0;
  /** Batches settle in the order they were sent. */
  private settled: Promise<void> = Promise.resolve();
  /** PostgreSQL: each chain's head as this writer's last batch on it leaves it. */
  private readonly heads: Map<string, Head> | undefined;
  /** PostgreSQL: the connection batches on known heads are written on. */
  private readonly pipe: PgPipe | undefined;

  constructor(private readonly db: Db, private readonly maxBatch = 500) {
    this.pipe = auditPipeOf(db);
    if (this.pipe) this.heads = new Map();
  }

  append(input: BatchedAudit): Promise<DbAuditRow> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      this.next();
    });
  }

  /** Resolves when every record queued so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.queue.length || this.gathering || this.writing) {
      await this.settled;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Gathers the next batch if there is room to send it: GATHER_TURNS turns of the event loop
   * after its first record, or until maxBatch. Calls in flight together reach their audit step
   * a turn or two apart (their reads wait for the end of a turn), and one commit then serves
   * them all (docs/performance.md, item 10). On an idle server a turn takes microseconds. One
   * batch is written at a time, and on PostgreSQL one more waits behind it on the pipe, so it
   * runs the moment the one before has committed (item 11).
   */
  private next(): void {
    if (this.gathering || !this.queue.length || this.writing >= (this.pipe ? 2 : 1)) return;
    this.gathering = true;
    void (async () => {
      for (let turn = 0; turn < GATHER_TURNS && this.queue.length < this.maxBatch; turn += 1) {
        await new Promise((resolve) => setImmediate(resolve));
      }
      this.gathering = false;
      this.send(this.queue.splice(0, this.maxBatch));
      this.next();
    })();
  }

  private send(batch: Pending[]): void {
    this.writing += 1;
    // On known heads the statement leaves now, behind the batch before it; otherwise the batch
    // takes the transaction path once every batch before it has settled.
    const known = this.pipe && !this.inTransactions && batch.every((pending) => this.heads!.has(chainOf(pending.input)));
    const rest = known ? this.appendOnKnownHeads(batch) : undefined;
    if (!known) this.inTransactions += 1;
    this.settled = this.settled
      .then(async () => this.writeInTransactions(rest ? await rest : batch))
      .catch((error: unknown) => batch.forEach((pending) => pending.reject(error)))
      .finally(() => {
        this.writing -= 1;
        if (!known) this.inTransactions -= 1;
        this.next();
      });
  }

  /** The transaction path: the batch in one transaction, or record by record if that fails. Never throws. */
  private async writeInTransactions(batch: Pending[]): Promise<void> {
    if (!batch.length) return;
    let rows: DbAuditRow[];
    try {
      rows = await writeTransaction(this.db, (sql) => writeBatchWith(sql, batch.map((p) => p.input)));
    } catch (error) {
      // The database is gone or a lock did not come in time: every call of the batch fails now
      // (`unavailable`), rather than each waiting again, one after another.
      if (isUnavailable(error)) {
        for (const pending of batch) pending.reject(error);
        return;
      }
      // One by one: a record that cannot be written fails its own call only.
      this.stats.retried += 1;
      for (const pending of batch) {
        await writeTransaction(this.db, (sql) => writeBatchWith(sql, [pending.input])).then((rows) => this.committed(pending, rows[0]), (error: unknown) => this.writtenBefore(pending, error));
      }
      return;
    }
    this.stats.transaction += 1;
    batch.forEach((pending, i) => this.committed(pending, rows[i]));
  }

  /**
   * The chains whose records of this batch (ids made here) are in the log: the answer to a
   * statement whose outcome was lost. The statement commits as a whole, but writes only the
   * records of the chains whose head it moved; undefined when none is there (or it cannot tell).
   */
  private async writtenChains(rows: DbAuditRow[]): Promise<Set<string> | undefined> {
    try {
      const found: Array<{ chain: string }> = await this.db('audit_log').whereIn('id', rows.map((row) => row.id)).distinct('chain');
      return found.length ? new Set(found.map((row) => row.chain)) : undefined;
    } catch {
      return undefined; // unknown: the transaction path writes them, with their ids (writtenBefore)
    }
  }

  /**
   * A record refused because its id is in the log: the same record, written before by a statement
   * whose outcome was lost (appendOnKnownHeads sends it on with its id), or by a call's earlier
   * attempt (mcp/pipeline.ts). It is the call's record; anything else fails the call.
   */
  private async writtenBefore(pending: Pending, error: unknown): Promise<void> {
    const { id } = pending.input;
    const stored = id && isUniqueViolation(error) ? await this.db<DbAuditRow>('audit_log').where({ id }).first().catch(() => undefined) : undefined;
    if (!stored) return pending.reject(error);
    // Not a head: records of its chain may have been written after it.
    this.stats.records += 1;
    pending.resolve(stored);
  }

  private committed(pending: Pending, row: DbAuditRow): void {
    this.stats.records += 1;
    // Records of one chain commit in seq order, so the last one seen is the head.
    this.heads?.set(row.chain, { seq: Number(row.seq), hash: row.hash });
    pending.resolve(row);
  }

  /**
   * PostgreSQL: sends the batch on the heads known here as one statement, and moves those heads
   * to the batch's last records at once, so the next batch can be built on them before this one
   * has committed. Resolves to the records still to write: those of the chains whose head had
   * moved, or all of them if the statement failed; their heads are forgotten, and the batches sent
   * behind this one on those chains come back too. Never rejects, so no record written here is
   * written again. Those it resolves to keep the ids they were sent with: a statement whose
   * connection was lost may still commit (below), and the log's primary key then refuses the second
   * copy, whichever of the two commits first (writtenBefore).
   */
  private async appendOnKnownHeads(batch: Pending[]): Promise<Pending[]> {
    const rows: DbAuditRow[] = new Array(batch.length);
    const moves: HeadMove[] = [];
    const chains = groupByChain(batch.map((p) => p.input));
    try {
      for (const [chain, members] of chains) {
        const known = this.heads!.get(chain)!;
        let head = known;
        for (const i of members) rows[i] = head = buildRecord(batch[i].input, chain, head);
        moves.push({ chain, known_seq: known.seq, known_hash: known.hash, seq: head.seq, hash: head.hash });
      }
    } catch {
      // A record that cannot be built: the transaction path reports it, record by record.
      return batch;
    }
    for (const move of moves) this.heads!.set(move.chain, { seq: move.seq, hash: move.hash });
    const uses = [...chains].flatMap(([chain, members]) => usesOf(members.map((i) => batch[i].input)).map((use) => ({ ...use, chain })));
    let moved: Set<string> | undefined;
    try {
      moved = await appendOnKnownHeads(this.pipe!, moves, rows, uses);
    } catch (error) {
      // The statement failed, and one statement fails as a whole: nothing counted, nothing written.
      // Unless the connection was lost after PostgreSQL committed it and before the answer came
      // back: then the records are there. The statement moves only the chains whose head was still
      // the known one, so which chains got their records is asked of the log chain by chain, not
      // told by one record. Or the connection was lost while the statement still waited (for a
      // row lock): its backend does not notice, and it commits when the lock comes, after this
      // question was answered; the records written again below keep their ids for that.
      if (isUnavailable(error)) moved = await this.writtenChains(rows);
    }
    if (moved) this.stats.statement += 1;
    const rest: Pending[] = [];
    for (const [chain, members] of chains) {
      if (moved?.has(chain)) {
        this.stats.records += members.length;
        for (const i of members) batch[i].resolve(rows[i]);
        continue;
      }
      this.heads!.delete(chain);
      for (const i of members) {
        // The same record again: the statement may still commit it (writtenBefore).
        batch[i].input = { ...batch[i].input, id: rows[i].id, time: rows[i].time };
        rest.push(batch[i]);
      }
    }
    return rest;
  }
}

/** A place in a chain: a record's seq and hash (the stored head, or a checkpoint kept outside Portico). */
export interface Head {
  seq: number;
  hash: string;
}

function chainOf(input: AuditInput): string {
  return input.tenantId ?? SYSTEM_CHAIN;
}

/** Indexes of `inputs` by chain, chains in sorted order (the order their heads are locked in). */
function groupByChain(inputs: readonly AuditInput[]): Map<string, number[]> {
  const byChain = new Map<string, number[]>();
  inputs.forEach((input, i) => {
    const chain = chainOf(input);
    const members = byChain.get(chain);
    if (members) members.push(i);
    else byChain.set(chain, [i]);
  });
  return new Map([...byChain].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** A chain's head moved from what this writer knows to its batch's last record. */
interface HeadMove {
  chain: string;
  known_seq: number;
  known_hash: string;
  seq: number;
  hash: string;
}

/**
 * One statement (PostgreSQL): moves each chain's head from its known value to the batch's last
 * record of that chain, inserts the records of the chains whose head it moved and counts their
 * `uses`. Returns those chains (one whose head is no longer the known one is left as it is: no
 * record, no use). One statement commits as a whole; the unique (chain, seq) index refuses a fork
 * even then, and the primary key a record written twice (AuditWriter.appendOnKnownHeads).
 */
async function appendOnKnownHeads(pipe: PgPipe, moves: HeadMove[], rows: DbAuditRow[], uses: ChainUse[]): Promise<Set<string>> {
  const [result] = await (moves.length === 1
    ? pipe.rows<MovedRow>(APPEND_ON_KNOWN_HEAD, [JSON.stringify(uses), moves[0].seq, moves[0].hash, moves[0].chain, moves[0].known_seq, moves[0].known_hash, JSON.stringify(rows)])
    : pipe.rows<MovedRow>(APPEND_ON_KNOWN_HEADS, [JSON.stringify(uses), JSON.stringify(moves), JSON.stringify(rows)]));
  const moved = new Set(result.chains ?? []);
  const expected = rows.reduce((n, row) => n + (moved.has(row.chain) ? 1 : 0), 0);
  if (Number(result.n) !== expected) throw new Error(`audit batch wrote ${result.n} records, expected ${expected}`);
  return moved;
}

interface MovedRow {
  chains: string[] | null;
  n: number | string;
}

/**
 * The connection rows are locked first, in id order (`locked`), and the heads only after them
 * (`moved`, or `heads` for several chains, waits for `locked`), in chain order: the order
 * revokeConnection and the transaction path take them in, so none of them can deadlock with these
 * statements. The uses are counted last (`used`), on rows already locked, and only those of the
 * records written: a record's use commits with the record or not at all, so a record the
 * transaction path writes again (its statement's outcome lost) is counted once however the two
 * end. Columns by name, not r.*: only statements without `*` are kept prepared (db/pg_client.ts).
 */
const LOCK_USES = `with uses as materialized (select u.id, u.chain, u.n, u.at from json_to_recordset(?::json) as u(id text, chain text, n int, at bigint)),
  locked as (select id from connections where id in (select id from uses) order by id collate "C" for no key update)`;
const WRITE_MOVED = `used as (update connections c set last_used_at = u.at, call_count = c.call_count + u.n
    from (select id, sum(n) as n, max(at) as at from uses where chain in (select chain from moved) group by id) u
    where c.id = u.id and c.id in (select id from locked) and c.revoked_at is null),
  written as (insert into audit_log (${COLUMN_LIST}) select ${COLUMNS.map((c) => `r.${c}`).join(', ')}
    from json_populate_recordset(null::audit_log, ?::json) as r where r.chain in (select chain from moved) returning 1)
  select (select json_agg(chain) from moved) as chains, (select count(*) from written) as n`;

/** One chain: its head moved from the known seq and hash to the last record's. */
const APPEND_ON_KNOWN_HEAD = `${LOCK_USES},
  moved as (update audit_heads set seq = ?, hash = ? where chain = ? and seq = ? and hash = ? and (select count(*) from locked) >= 0 returning chain),
  ${WRITE_MOVED}`;

/** Several chains: their heads locked in chain order (`heads`), then each moved from its known value. */
const APPEND_ON_KNOWN_HEADS = `${LOCK_USES},
  moves as materialized (select m.chain, m.known_seq, m.known_hash, m.seq, m.hash
    from json_to_recordset(?::json) as m(chain text, known_seq bigint, known_hash text, seq bigint, hash text)),
  heads as (select chain from audit_heads where chain in (select chain from moves) and (select count(*) from locked) >= 0
    order by chain collate "C" for no key update),
  moved as (update audit_heads h set seq = m.seq, hash = m.hash from moves m
    where h.chain = m.chain and h.chain in (select chain from heads) and h.seq = m.known_seq and h.hash = m.known_hash returning h.chain),
  ${WRITE_MOVED}`;

/** Appends many records in the caller's transaction; returns them in input order. */
export function writeBatch(trx: DbOrTrx, inputs: BatchedAudit[]): Promise<DbAuditRow[]> {
  return writeBatchWith(knexSql(trx), inputs);
}

interface Use {
  id: string;
  n: number;
  at: number;
}

/** Uses of a connection by the records of one chain (appendOnKnownHeads counts those of the chains it writes). */
interface ChainUse extends Use {
  chain: string;
}

/** The uses of connections among `inputs` (those that `touch`), in connection id order. */
function usesOf(inputs: readonly BatchedAudit[]): Use[] {
  const uses = new Map<string, Use>();
  for (const input of inputs) {
    if (!input.touch || !input.connectionId) continue;
    const use = uses.get(input.connectionId) ?? { id: input.connectionId, n: 0, at: 0 };
    use.n += 1;
    use.at = Math.max(use.at, input.time ?? Date.now());
    uses.set(input.connectionId, use);
  }
  // Code-unit order, which is `collate "C"` in PostgreSQL.
  return [...uses.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * Counts the calls of `inputs` that `touch` as uses of their connections, connections in id order.
 * A revoked connection's uses stay as they were when it was revoked: a call that ended after that
 * (refused at its commit point, cancelled as its session closed) did not use it, and the console
 * must not show it used after its revocation. The record itself is written all the same.
 */
async function countUses(sql: SqlRunner, inputs: readonly BatchedAudit[]): Promise<void> {
  for (const { id, n, at } of usesOf(inputs)) await sql.run('update connections set last_used_at = ?, call_count = call_count + ? where id = ? and revoked_at is null', [at, n, id]);
}

/** writeBatch on a transaction's plain-SQL runner (db/connect.ts writeTransaction). */
async function writeBatchWith(sql: SqlRunner, inputs: BatchedAudit[]): Promise<DbAuditRow[]> {
  await countUses(sql, inputs);
  const rows: DbAuditRow[] = new Array(inputs.length);
  const values: unknown[][] = [];
  const heads: Array<{ chain: string; head: Head }> = [];
  for (const [chain, members] of groupByChain(inputs)) {
    let head = await lockHead(sql, chain);
    for (const i of members) {
      const row = buildRecord(inputs[i], chain, head);
      rows[i] = row;
      values.push(COLUMNS.map((column) => row[column] ?? null));
      head = row;
    }
    heads.push({ chain, head });
  }
  await sql.insert('audit_log', COLUMNS, values);
  for (const { chain, head } of heads) await saveHead(sql, chain, head);
  return rows;
}

export interface AuditVerification {
  ok: boolean;
  checked: number;
  first_broken?: { seq: number; id: string; reason: string };
  /** Where the verified chain ends (its last record), to keep as a checkpoint: see `formatCheckpoint`. */
  end?: Head;
}

/**
 * Walks a chain in order (from the database or an export) and reports the first broken record.
 * With `head` (the chain head as stored, read before the records), the chain must also reach it:
 * the record at the head's seq must be the head's hash, and no record up to it may be missing
 * (the newest records deleted). Records appended after the head was read are checked too.
 * `checkpoint` is the same test against a place in the chain noted earlier, outside the
 * database: it holds even against someone who rewrote the records and their stored head.
 */
export async function verifyChain(rows: AsyncIterable<DbAuditRow> | Iterable<DbAuditRow>, head?: Head, checkpoint?: Head): Promise<AuditVerification> {
  let prev = GENESIS_HASH;
  let expectedSeq = 1;
  let checked = 0;
  for await (const row of rows) {
    const reason =
      row.seq !== expectedSeq ? `expected seq ${expectedSeq}, found ${row.seq}` :
      row.prev_hash !== prev ? 'prev_hash does not match the previous record' :
      recordHash(row) !== row.hash ? 'hash does not match the record' :
      head && row.seq === head.seq && row.hash !== head.hash ? 'the chain head does not match this record' :
      checkpoint && row.seq === checkpoint.seq && row.hash !== checkpoint.hash ? 'the checkpoint given does not match this record' : undefined;
    if (reason) return { ok: false, checked, first_broken: { seq: row.seq, id: row.id, reason } };
    prev = row.hash;
    expectedSeq += 1;
    checked += 1;
  }
  for (const [place, what] of [[head, 'the chain head'], [checkpoint, 'the checkpoint given']] as const) {
    if (place && place.seq > checked) {
      const reason = `records missing: ${what} is at seq ${place.seq}, the last record is seq ${checked}`;
      return { ok: false, checked, first_broken: { seq: checked + 1, id: '', reason } };
    }
  }
  return checked ? { ok: true, checked, end: { seq: checked, hash: prev } } : { ok: true, checked };
}

/** A checkpoint as people copy it: `seq:hash`. */
export function formatCheckpoint(place: Head): string {
  return `${place.seq}:${place.hash}`;
}

/** Reads `seq:hash` (a record's seq from 1, its 64-hex-digit hash); undefined when it is not that. */
export function parseCheckpoint(text: string): Head | undefined {
  const match = /^([1-9][0-9]{0,15}):([0-9a-f]{64})$/.exec(text.trim().toLowerCase());
  const seq = Number(match?.[1]);
  // 16 digits can pass 2^53, where a number no longer holds the seq written (9007199254740993 reads …992).
  return match && Number.isSafeInteger(seq) ? { seq, hash: match[2] } : undefined;
}

/** The stored chain head of a tenant (seq 0 and the genesis hash before its first record). */
export async function chainHead(db: DbOrTrx, tenantId: string | null): Promise<Head | undefined> {
  const row: HeadRow | undefined = await db('audit_heads').where({ chain: tenantId ?? SYSTEM_CHAIN }).first('seq', 'hash');
  return row ? { seq: Number(row.seq), hash: row.hash } : undefined;
}

/**
 * Verifies a tenant's chain in the database against its stored head: a record edited, removed,
 * inserted or reordered, the newest records deleted, a record written past the head, or a head
 * that is not the chain's end. The head is read before the records (every record up to it must be
 * there) and, when the records go on past it (appended meanwhile), again after them: a head and its
 * records commit together, so every record read must then be covered by it.
 */
export async function verifyStoredChain(db: DbOrTrx, tenantId: string | null, checkpoint?: Head): Promise<AuditVerification> {
  const before = await chainHead(db, tenantId);
  let last: DbAuditRow | undefined;
  async function* tracked(): AsyncGenerator<DbAuditRow> {
    for await (const row of chainRows(db, tenantId)) yield (last = row);
  }
  const result = await verifyChain(tracked(), before ?? { seq: 0, hash: GENESIS_HASH }, checkpoint);
  if (!result.ok || !last || (before && last.seq === before.seq)) return result;
  const after = await chainHead(db, tenantId);
  if (!after) return { ok: false, checked: 0, first_broken: { seq: 1, id: '', reason: 'the chain has records but no head' } };
  if (after.seq < last.seq) {
    const beyond = await db('audit_log').where({ chain: tenantId ?? SYSTEM_CHAIN, seq: after.seq + 1 }).first('id');
    return { ok: false, checked: after.seq, first_broken: { seq: after.seq + 1, id: beyond?.id ?? '', reason: `the record is past the chain head (seq ${after.seq})` } };
  }
  if (after.seq === last.seq && after.hash !== last.hash) {
    return { ok: false, checked: last.seq - 1, first_broken: { seq: last.seq, id: last.id, reason: 'the chain head does not match this record' } };
  }
  return result;
}

/** Streams a tenant's chain in order, in pages, in constant memory. */
export async function* chainRows(db: DbOrTrx, tenantId: string | null, pageSize = 1000): AsyncGenerator<DbAuditRow> {
  for await (const page of chainPages(db, tenantId, pageSize)) yield* page;
}

/** chainRows a page at a time (one await per page, not per record: for exports). */
export async function* chainPages(db: DbOrTrx, tenantId: string | null, pageSize = 1000): AsyncGenerator<DbAuditRow[]> {
  const chain = tenantId ?? SYSTEM_CHAIN;
  let after = 0;
  for (;;) {
    const page: DbAuditRow[] = await db('audit_log').where({ chain }).andWhere('seq', '>', after).orderBy('seq').limit(pageSize);
    if (page.length) yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1].seq;
  }
}

export interface AuditFilter {
  tenantId: string;
  /** Members see only their own records. */
  userId?: string;
  product?: string;
  name?: string;
  clientId?: string;
  connectionId?: string;
  outcome?: string;
  kind?: AuditKind;
  from?: number;
  to?: number;
}

function applyFilter(query: import('knex').Knex.QueryBuilder, filter: AuditFilter): void {
  query.where('tenant_id', filter.tenantId);
  if (filter.userId) query.where('user_id', filter.userId);
  if (filter.product) query.where('product', filter.product);
  if (filter.name) query.where('name', filter.name);
  if (filter.clientId) query.where('client_id', filter.clientId);
  if (filter.connectionId) query.where('connection_id', filter.connectionId);
  if (filter.outcome) query.where('outcome', filter.outcome);
  if (filter.kind) query.where('kind', filter.kind);
  if (filter.from !== undefined) query.where('time', '>=', filter.from);
  if (filter.to !== undefined) query.where('time', '<', filter.to);
}

/** A place in the newest-first listing (db/keyset.ts). */
export type AuditCursor = KeysetCursor;
export { decodeCursor };

/**
 * Newest first, keyset-paginated both ways (db/keyset.ts). `next` continues with older records,
 * `previous` goes back to newer ones. Records are never deleted, so the record a cursor was made
 * from is still there: a page reached by a cursor always has a way back.
 */
export async function queryAudit(
  db: DbOrTrx,
  filter: AuditFilter,
  page: { limit: number; cursor?: AuditCursor },
): Promise<KeysetPage<DbAuditRow>> {
  const query = db<DbAuditRow>('audit_log');
  applyFilter(query, filter);
  return newestFirstPage<DbAuditRow>(query, { time: 'time', id: 'id' }, page, (row) => row);
}

/** Matching records oldest first, a page at a time (for export), in constant memory. */
export async function* auditPages(db: DbOrTrx, filter: AuditFilter): AsyncGenerator<DbAuditRow[]> {
  const pageSize = 2000;
  let after: { time: number; id: string } | undefined;
  for (;;) {
    const query = db<DbAuditRow>('audit_log');
    applyFilter(query, filter);
    if (after) {
      const { time, id } = after;
      query.where((q) => q.where('time', '>', time).orWhere((q2) => q2.where('time', time).andWhere('id', '>', id)));
    }
    const page: DbAuditRow[] = await query.orderBy([{ column: 'time', order: 'asc' }, { column: 'id', order: 'asc' }]).limit(pageSize);
    if (page.length) yield page;
    if (page.length < pageSize) return;
    after = page[page.length - 1];
  }
}

/** Calls per UTC day per product since `from` (for the console's activity chart). */
export async function dailyActivity(db: DbOrTrx, filter: AuditFilter): Promise<Array<{ day: number; product: string; calls: number }>> {
  const query = db('audit_log').whereIn('kind', ['tool', 'resource', 'prompt']).whereNotNull('product');
  applyFilter(query, filter);
  // Integer division on an integer column is floor on both SQLite and PostgreSQL (times are positive).
  const rows = await query.groupByRaw('time / 86400000, product').select(db.raw('time / 86400000 as day'), 'product', db.raw('count(*) as calls'));
  return rows.map((r: { day: number | string; product: string; calls: number | string }) => ({ day: Number(r.day), product: r.product, calls: Number(r.calls) }));
}
