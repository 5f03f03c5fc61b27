/**
 * oidc-provider's storage on the shared database: every model in table `oidc_payloads`.
 *
 * Contract with the resource servers (db/grant_store.ts): bearer models are stored under
 * hashTokenId(value) with no `jti` in the stored payload, so a database read or a backup never
 * yields a usable token; access-token rows of a revoked grant are kept with `revoked_at` set.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Db, DbOrTrx } from '../db/connect.js';
import { BEARER_MODELS, hashTokenId } from '../db/grant_store.js';

export interface AdapterOptions {
  /**
   * How long a rotated refresh token still looks unused (notes §2.5). Inside the window a second
   * refresh with the same token loses the atomic consume (invalid_grant) instead of being treated
   * as theft that revokes the grant, so two parallel refreshes leave the connection working.
   */
  refreshReuseGraceMs: number;
}

interface DbPayloadRow {
  model: string;
  id: string;
  payload: string;
  grant_id: string | null;
  uid: string | null;
  user_code: string | null;
  client_id: string | null;
  account_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
  revoked_at: number | null;
}

/**
 * Whether a key from a request can name a row at all. Keys are made here (random ids, hashes),
 * never with U+0000, and PostgreSQL refuses that character in text outright: a client_id of
 * "a%00b" at the token or authorization endpoint was a 500 there instead of an unknown client.
 */
function storable(key: string): boolean {
  return typeof key === 'string' && !key.includes('\u0000');
}

function storedId(model: string, id: string): string {
  return BEARER_MODELS.has(model) ? hashTokenId(id) : id;
}

/** Returns the adapter factory oidc-provider calls once per model name. */
export function knexAdapter(db: Db, options: AdapterOptions): (model: string) => Adapter {
  return (model) => new KnexAdapter(db, model, options);
}

class KnexAdapter implements Adapter {
  private readonly bearer: boolean;

  constructor(private readonly db: Db, private readonly model: string, private readonly options: AdapterOptions) {
    this.bearer = BEARER_MODELS.has(model);
  }

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const { jti: _jti, ...rest } = payload;
    const stored = this.bearer ? rest : payload;
    const row = {
      model: this.model,
      id: storedId(this.model, id),
      payload: JSON.stringify(stored),
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      user_code: payload.userCode ?? null,
      client_id: payload.clientId ?? (this.model === 'Client' ? (payload.client_id as string) : null),
      account_id: payload.accountId ?? null,
      expires_at: expiresIn ? Date.now() + expiresIn * 1000 : null,
      created_at: Date.now(),
    };
    await this.db('oidc_payloads')
      .insert(row)
      .onConflict(['model', 'id'])
      .merge(['payload', 'grant_id', 'uid', 'user_code', 'client_id', 'account_id', 'expires_at']);
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (!storable(id)) return undefined;
    const row = await this.db<DbPayloadRow>('oidc_payloads').where({ model: this.model, id: storedId(this.model, id) }).first();
    return this.fromRow(row, id);
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    if (!storable(uid)) return undefined;
    const row = await this.db<DbPayloadRow>('oidc_payloads').where({ model: this.model, uid }).first();
    return this.fromRow(row, row?.id);
  }

  async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    if (!storable(userCode)) return undefined;
    const row = await this.db<DbPayloadRow>('oidc_payloads').where({ model: this.model, user_code: userCode }).first();
    return this.fromRow(row, row?.id);
  }

  /**
   * Atomic: of any number of concurrent consumers exactly one changes the row. oidc-provider
   * checks `consumed` and then calls consume(), so without the condition two parallel
   * redemptions of one code (or one refresh token) would both succeed (checklist C2).
   */
  async consume(id: string): Promise<void> {
    const changed = await this.db('oidc_payloads')
      .where({ model: this.model, id: storedId(this.model, id) })
      .whereNull('consumed_at')
      .whereNull('revoked_at')
      .update({ consumed_at: Date.now() });
    if (!changed) throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'grant'} already used`);
  }

  async destroy(id: string): Promise<void> {
    await this.db('oidc_payloads').where({ model: this.model, id: storedId(this.model, id) }).delete();
  }

  /**
   * Access tokens of a revoked grant stay as rows marked revoked, so the resource server answers
   * connection_revoked rather than invalid_token; every other model's rows are deleted.
   */
  async revokeByGrantId(grantId: string): Promise<void> {
    const rows = this.db('oidc_payloads').where({ model: this.model, grant_id: grantId });
    if (this.model === 'AccessToken') await rows.whereNull('revoked_at').update({ revoked_at: Date.now() });
    else await rows.delete();
  }

  private fromRow(row: DbPayloadRow | undefined, id: string | undefined): AdapterPayload | undefined {
    if (!row || row.revoked_at) return undefined;
    const now = Date.now();
    if (row.expires_at !== null && row.expires_at <= now) return undefined;
    const payload = JSON.parse(row.payload) as AdapterPayload;
    if (this.bearer && id !== undefined) payload.jti = id;
    // Interactions use consumed_at only for claimInteraction(); the provider never sees it.
    if (row.consumed_at !== null && this.model !== 'Interaction') {
      const inGrace = this.model === 'RefreshToken' && now - row.consumed_at < this.options.refreshReuseGraceMs;
      if (!inGrace) payload.consumed = Math.floor(row.consumed_at / 1000);
    }
    return payload;
  }
}

/**
 * Deletes rows whose lifetime is over (the provider never does). Consumed codes and refresh
 * tokens are kept until they expire, because their presence is what detects a replay.
 */
export async function purgeExpired(db: DbOrTrx, now = Date.now()): Promise<number> {
  return db('oidc_payloads').where('expires_at', '<=', now)
    // A grant's row goes only once its connection has ended (endExpiredGrants, on this run or the
    // next): deleted before, nothing would ever end the connection, listed as live for ever.
    .whereNot((expired) => expired.where('model', 'Grant')
      .whereExists(db('connections').whereNull('revoked_at').whereRaw('connections.grant_id = oidc_payloads.id').select(db.raw('1'))))
    .delete();
}

/** Self-registered clients never expire (the provider stores them without a lifetime). */
export const UNUSED_CLIENT_DAYS = 30;

/**
 * Deletes self-registered clients older than UNUSED_CLIENT_DAYS that hold no grant and no live
 * connection, with their registration access tokens: open registration must not grow forever.
 */
export async function purgeUnusedClients(db: DbOrTrx, now = Date.now()): Promise<number> {
  const unused = db('oidc_payloads as c')
    .where('c.model', 'Client')
    .where('c.id', 'like', 'dcr_%') // only minted ids start with dcr (the _ wildcard matches itself too)
    .where('c.created_at', '<', now - UNUSED_CLIENT_DAYS * 86_400_000)
    .whereNotExists(db('oidc_payloads as g').where('g.model', 'Grant').whereRaw('g.client_id = c.id').select(db.raw('1')))
    .whereNotExists(db('connections as k').whereNull('k.revoked_at').whereRaw('k.client_id = c.id').select(db.raw('1')))
    .select('c.id');
  const ids: string[] = (await unused).map((row: { id: string }) => row.id);
  if (!ids.length) return 0;
  await db('oidc_payloads').where('model', 'RegistrationAccessToken').whereIn('client_id', ids).delete();
  return db('oidc_payloads').where('model', 'Client').whereIn('id', ids).delete();
}

/**
 * Marks an interaction as answered, atomically: of two concurrent (or replayed) consent
 * submissions for one interaction, only the first creates a grant (checklist G3, R12).
 */
export async function claimInteraction(db: DbOrTrx, uid: string): Promise<boolean> {
  const changed = await db('oidc_payloads').where({ model: 'Interaction', id: uid }).whereNull('consumed_at').update({ consumed_at: Date.now() });
  return changed === 1;
}
