/**
 * PostgreSQL: harvest writes that wait for a lot or report another call is changing. Each runs on
 * the record as that call left it: its answer shows the record as stored after it, a field it
 * sets is stored even when it was the value it replaced before the other call, a record deleted
 * meanwhile is not_found and a lot closed meanwhile is a conflict.
 */
import type { ExecutionContext } from 'ava';
import { harvest } from '../../mcp/products/harvest/index.js';
import { mcpPostgresTest, type Connected, type GrantOptions } from '../helpers/mcp.js';
import { call, confirmation, connections, inLine } from './parallel_support.js';

const GRANT: GrantOptions = { product: 'harvest', tenant: 'acme', scopes: Object.keys(harvest.scopes) };

async function createLot(t: ExecutionContext, connected: Connected): Promise<string> {
  const created = await call(connected.client, 'harvest.create_lot', {
    item: 'Copper cable offcuts', condition: 'good', quantity: 3, currency: 'EUR', estimated_value_minor: 12_000, location: 'Dock 1',
  });
  t.true(created.ok, JSON.stringify(created));
  return created.value.id;
}

mcpPostgresTest('a lot update that waits for another update answers with both changes, as stored', async (t, server) => {
  const [a, b] = await connections(server, GRANT, 2);
  try {
    const id = await createLot(t, a);
    const [located, counted] = await inLine(t, server.db, 'harvest_lots', id, [
      () => call(a.client, 'harvest.update_lot', { lot_id: id, location: 'Dock 9' }),
      () => call(b.client, 'harvest.update_lot', { lot_id: id, quantity: 7 }),
    ]);
    t.true(located.ok && counted.ok, JSON.stringify([located, counted]));
    t.deepEqual(counted.value.changed, ['quantity']);
    const row = await server.db('harvest_lots').where({ id }).first();
    t.is(row.location, 'Dock 9');
    t.like(counted.value, { location: row.location, quantity: Number(row.quantity), updated_at: new Date(Number(row.updated_at)).toISOString() });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

mcpPostgresTest('a lot update that sets a field back while another update changes it stores its value', async (t, server) => {
  const [a, b] = await connections(server, GRANT, 2);
  try {
    const id = await createLot(t, a);
    const [moved, back] = await inLine(t, server.db, 'harvest_lots', id, [
      () => call(a.client, 'harvest.update_lot', { lot_id: id, location: 'Dock 9' }),
      () => call(b.client, 'harvest.update_lot', { lot_id: id, location: 'Dock 1' }),
    ]);
    t.true(moved.ok && back.ok, JSON.stringify([moved, back]));
    t.deepEqual(back.value.changed, ['location']);
    t.is(back.value.location, 'Dock 1');
    t.is((await server.db('harvest_lots').where({ id }).first()).location, 'Dock 1', 'the later update is the one stored');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

mcpPostgresTest('a lot deleted while an update and a close wait for it answers both with not_found', async (t, server) => {
  const [a, b, c] = await connections(server, GRANT, 3);
  try {
    const id = await createLot(t, a);
    const deleteNow = await confirmation(a.client, 'harvest.delete_lot', { lot_id: id });
    const closeNow = await confirmation(c.client, 'harvest.close_lot', { lot_id: id, outcome: 'sold' });
    const [deleted, updated, closed] = await inLine(t, server.db, 'harvest_lots', id, [
      deleteNow,
      () => call(b.client, 'harvest.update_lot', { lot_id: id, location: 'Dock 9' }),
      closeNow,
    ]);
    t.true(deleted.ok, JSON.stringify(deleted));
    t.is(updated.code, 'not_found', JSON.stringify(updated));
    t.is(closed.code, 'not_found', JSON.stringify(closed));
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});

mcpPostgresTest('a lot closed while an update and another close wait for it answers both with conflict', async (t, server) => {
  const [a, b, c] = await connections(server, GRANT, 3);
  try {
    const id = await createLot(t, a);
    const sellNow = await confirmation(a.client, 'harvest.close_lot', { lot_id: id, outcome: 'sold' });
    const scrapNow = await confirmation(c.client, 'harvest.close_lot', { lot_id: id, outcome: 'scrapped' });
    const [sold, updated, scrapped] = await inLine(t, server.db, 'harvest_lots', id, [
      sellNow,
      () => call(b.client, 'harvest.update_lot', { lot_id: id, status: 'reserved' }),
      scrapNow,
    ]);
    t.true(sold.ok, JSON.stringify(sold));
    t.is(updated.code, 'conflict', JSON.stringify(updated));
    t.is(scrapped.code, 'conflict', JSON.stringify(scrapped));
    t.is((await server.db('harvest_lots').where({ id }).first()).status, 'sold');
  } finally {
    await Promise.all([a.close(), b.close(), c.close()]);
  }
});

mcpPostgresTest('a report update that waits for another update answers with both changes, as stored', async (t, server) => {
  const [a, b] = await connections(server, GRANT, 2);
  try {
    const created = await call(a.client, 'harvest.create_report', { subject: 'Scrap prices', source: 'Trade fair', summary: 'Copper is up.', confidence: 'low' });
    t.true(created.ok, JSON.stringify(created));
    const id: string = created.value.id;
    const [summarised, rated] = await inLine(t, server.db, 'harvest_reports', id, [
      () => call(a.client, 'harvest.update_report', { report_id: id, summary: 'Copper is up 4 %.' }),
      () => call(b.client, 'harvest.update_report', { report_id: id, confidence: 'high' }),
    ]);
    t.true(summarised.ok && rated.ok, JSON.stringify([summarised, rated]));
    t.like(rated.value, { summary: 'Copper is up 4 %.', confidence: 'high', changed: ['confidence'] });
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

mcpPostgresTest('a lot deletion that waits for a close answers with the lot as it was deleted', async (t, server) => {
  const [a, b] = await connections(server, GRANT, 2);
  try {
    const id = await createLot(t, a);
    const sellNow = await confirmation(a.client, 'harvest.close_lot', { lot_id: id, outcome: 'sold' });
    const deleteNow = await confirmation(b.client, 'harvest.delete_lot', { lot_id: id });
    const [sold, deleted] = await inLine(t, server.db, 'harvest_lots', id, [sellNow, deleteNow]);
    t.true(sold.ok && deleted.ok, JSON.stringify([sold, deleted]));
    t.like(deleted.value, { deleted: true, id, status: 'sold' });
    t.is(await server.db('harvest_lots').where({ id }).first(), undefined);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});
