/**
 * verification checks the link between records (prev_hash), not only each record against
 * its own hash. The existing tests edit a record without recomputing its hash, which the
 * per-record check alone finds; nothing noticed the link check's removal.
 */
import { testOnEachDatabase } from '../../helpers/db.js';
import { createTenant } from '../../../db/accounts.js';
import { appendAudit, chainRows, recordHash, verifyChain, type DbAuditRow } from '../../../db/audit.js';

testOnEachDatabase('a record edited and re-hashed is found at the next record, whose link no longer matches', async (t, { db }) => {
  const acme = await createTenant(db, { slug: 'acme', name: 'Acme' });
  for (let i = 0; i < 4; i += 1) await appendAudit(db, { tenantId: acme.id, kind: 'tool', name: 'forge.delete_conversation', outcome: 'ok' });
  const row: DbAuditRow = await db('audit_log').where({ chain: acme.id, seq: 2 }).first();
  // Someone with write access hides the deletion and makes the record consistent with itself again.
  const edited = { ...row, outcome: 'confirmation_required' };
  await db('audit_log').where({ id: row.id }).update({ outcome: edited.outcome, hash: recordHash(edited) });
  const result = await verifyChain(chainRows(db, acme.id));
  t.false(result.ok);
  t.is(result.first_broken?.seq, 3);
  t.is(result.first_broken?.reason, 'prev_hash does not match the previous record');
});
