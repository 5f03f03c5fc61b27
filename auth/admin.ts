/**
 * Operator commands for OAuth clients: `client add` pre-registers a client (its id starts with
 * `reg_`, which no self-registered client can have), `client list` shows them.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { Db } from '../db/connect.js';
import { appendAudit } from '../db/audit.js';
import { AppError, UsageError } from '../shared/errors.js';
import type { AdminCommand } from '../scripts/admin.js';

// Client ids minted here start with this prefix (auth/clients.ts REGISTERED_PREFIX; kept literal so
// that listing clients does not load oidc-provider).
const REGISTERED_PREFIX = 'reg_';

const ADD_USAGE = 'client add --name <name> --redirect-uri <uri> [--redirect-uri <uri> ...] [--confidential]';

/**
 * Validates metadata exactly as the running server will when it loads the client: the same
 * normaliser and client schema of oidc-provider, so a stored client can never fail later.
 */
async function validateClient(db: Db, metadata: Record<string, unknown>): Promise<void> {
  const { default: Provider } = await import('oidc-provider');
  const { knexAdapter } = await import('./adapter.js');
  const { CLIENT_DEFAULTS, extraClientMetadata } = await import('./clients.js');
  const { loadOrCreateJwks } = await import('./keys.js');
  const provider = new Provider('http://localhost', {
    adapter: knexAdapter(db, { refreshReuseGraceMs: 0 }),
    jwks: (await loadOrCreateJwks(db)) as import('oidc-provider').Configuration['jwks'],
    clientDefaults: CLIENT_DEFAULTS,
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    responseTypes: ['code'],
    extraClientMetadata: extraClientMetadata(),
    features: { devInteractions: { enabled: false } },
  });
  try {
    await (provider.Client as unknown as { validate(m: Record<string, unknown>): Promise<void> }).validate(metadata);
  } catch (error) {
    const description = (error as { error_description?: string }).error_description ?? 'invalid client metadata';
    throw new AppError('invalid_request', description, { cause: error });
  }
}

export const CLIENT_COMMANDS: Record<string, AdminCommand> = {
  'client add': {
    usage: ADD_USAGE,
    async run(db, args, { out }) {
      const { values } = parseArgs({
        args,
        options: { name: { type: 'string' }, 'redirect-uri': { type: 'string', multiple: true }, confidential: { type: 'boolean' } },
      });
      const name = values.name?.trim();
      const redirectUris = values['redirect-uri'] ?? [];
      if (!name || !redirectUris.length) throw new UsageError(`client add needs ${[!name && '--name', !redirectUris.length && '--redirect-uri'].filter(Boolean).join(' and ')}`);
      if (name.length > 200) throw new AppError('invalid_request', 'the client name must be at most 200 characters');
      const { classifyRedirectUri, MAX_REDIRECT_URIS, newClientId } = await import('./clients.js');
      if (redirectUris.length > MAX_REDIRECT_URIS) throw new AppError('invalid_request', `at most ${MAX_REDIRECT_URIS} redirect URIs`);
      for (const uri of redirectUris) {
        const kind = classifyRedirectUri(uri);
        if (typeof kind !== 'string') throw new AppError('invalid_request', kind.problem);
      }
      const clientId = newClientId(REGISTERED_PREFIX);
      const secret = values.confidential ? randomBytes(32).toString('base64url') : undefined;
      const metadata: Record<string, unknown> = {
        client_id: clientId,
        client_name: name,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: secret ? 'client_secret_basic' : 'none',
        client_id_issued_at: Math.floor(Date.now() / 1000),
        ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
      };
      await validateClient(db, metadata);
      await db.transaction(async (trx) => {
        await trx('oidc_payloads').insert({ model: 'Client', id: clientId, client_id: clientId, payload: JSON.stringify(metadata), expires_at: null, created_at: Date.now() });
        await appendAudit(trx, { tenantId: null, clientId, kind: 'admin', name: 'client.add', args: { name, redirect_uris: redirectUris, confidential: !!secret }, outcome: 'ok' });
      });
      out(`client_id: ${clientId}`);
      if (secret) out(`client_secret: ${secret}   (shown once; store it now)`);
      out(`token_endpoint_auth_method: ${metadata.token_endpoint_auth_method}`);
    },
  },

  'client list': {
    usage: 'client list [--all]',
    async run(db, args, { out }) {
      const { values } = parseArgs({ args, options: { all: { type: 'boolean' } } });
      const query = db('oidc_payloads').where({ model: 'Client' }).orderBy('id').select('id', 'payload');
      if (!values.all) query.where('id', 'like', `${REGISTERED_PREFIX}%`);
      const rows: Array<{ id: string; payload: string }> = await query;
      if (!rows.length) return out(values.all ? 'no clients' : 'no registered clients (use --all to include self-registered ones)');
      for (const row of rows) {
        const metadata = JSON.parse(row.payload) as { client_name?: string; redirect_uris?: string[]; token_endpoint_auth_method?: string };
        const kind = row.id.startsWith(REGISTERED_PREFIX) ? 'registered' : 'self-registered';
        out(`${row.id.padEnd(28)} ${(metadata.client_name ?? '').padEnd(24)} ${kind.padEnd(16)} ${(metadata.token_endpoint_auth_method ?? 'none').padEnd(20)} ${(metadata.redirect_uris ?? []).join(' ')}`);
      }
    },
  },
};
