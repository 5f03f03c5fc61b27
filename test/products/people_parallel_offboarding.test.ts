/**
 * A person offboarded while others are made to report to them, or while their own profile is
 * edited: nobody ends up reporting to someone who left (offboarding moves direct reports to the
 * leaver's manager), and a closed profile is not changed after its offboarding, on every database.
 */
import { connect, mcpTest } from '../helpers/mcp.js';
import { people } from '../../mcp/products/people/index.js';
import { call, confirmation, unexpected } from './parallel_support.js';

const today = () => new Date().toISOString().slice(0, 10);

mcpTest('people made to report to a manager who is being offboarded end up with the manager\'s own manager', async (t, server) => {
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
  try {
    for (let round = 0; round < 6; round += 1) {
      const person = async (name: string, extra: Record<string, unknown> = {}) => {
        const created = await call(client, 'people.create_person', { full_name: name, email: `${name.toLowerCase().replace(/ /g, '.')}.${round}@acme.example`, status: 'active', ...extra });
        t.true(created.ok, JSON.stringify(created));
        return created.value.id as string;
      };
      const boss = await person('Big Boss');
      const manager = await person('Leaving Manager', { manager_id: boss });
      const report = await person('Moving Report');
      const offboardNow = await confirmation(client, 'people.offboard_person', { person_id: manager, last_day: today(), reason: 'resignation' });
      const [offboarded, ...moved] = await Promise.all([
        offboardNow(),
        call(client, 'people.update_person', { person_id: report, manager_id: manager }),
        call(client, 'people.create_person', { full_name: 'New Report', email: `new.report.${round}@acme.example`, status: 'active', manager_id: manager }),
      ]);
      t.true(offboarded.ok, JSON.stringify(offboarded));
      t.deepEqual(unexpected(moved, ['conflict']), [], `round ${round}: each call succeeded or was refused with conflict`);
      const stranded = await server.db('people_profiles').where({ manager_id: manager }).whereNot('status', 'offboarded');
      t.deepEqual(stranded.map((p: { full_name: string }) => p.full_name), [], `round ${round}: nobody reports to the offboarded manager`);
    }
  } finally {
    await close();
  }
});

mcpTest('a profile edited while the person is offboarded is changed before the offboarding or refused', async (t, server) => {
  const { client, close } = await connect(server, { product: 'people', tenant: 'acme', scopes: Object.keys(people.scopes) });
  try {
    for (let round = 0; round < 6; round += 1) {
      const created = await call(client, 'people.create_person', { full_name: `Leaver ${round}`, email: `leaver.${round}@acme.example`, status: 'active', job_title: 'Engineer' });
      t.true(created.ok, JSON.stringify(created));
      const id: string = created.value.id;
      const offboardNow = await confirmation(client, 'people.offboard_person', { person_id: id, last_day: today(), reason: 'resignation' });
      const [offboarded, edited] = await Promise.all([offboardNow(), call(client, 'people.update_person', { person_id: id, job_title: `Staff Engineer ${round}` })]);
      t.true(offboarded.ok, JSON.stringify(offboarded));
      t.deepEqual(unexpected([edited], ['conflict']), [], `round ${round}`);
      const events: Array<{ kind: string; sequence: number }> = await server.db('people_lifecycle_events').where({ person_id: id }).orderBy('sequence');
      const kinds = events.map((e) => e.kind);
      t.is(kinds.at(-1), 'offboarded', `round ${round}: nothing changes the profile after its offboarding (${kinds.join(', ')})`);
      t.is(kinds.includes('profile_updated'), edited.ok, `round ${round}: the history has the edit exactly when it succeeded`);
    }
  } finally {
    await close();
  }
});
