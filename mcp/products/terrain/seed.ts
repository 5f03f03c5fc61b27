/** Demo rows for terrain: workflow definitions and runs in every status, with their history. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, nameKey, type NewRow } from '../common.js';
import type { DbRunEventRow, DbRunRow, DbStepRow, DbWorkflowRow } from './repository.js';

interface SampleWorkflow {
  name: string;
  description: string;
  steps: Array<[name: string, instructions: string]>;
  runs: Array<{ subject: string; daysAgo: number; reached: number; status: 'running' | 'completed' | 'cancelled'; reason?: string }>;
}

const SAMPLES: Record<string, SampleWorkflow[]> = {
  acme: [
    {
      name: 'Site survey',
      description: 'Survey a plot before construction starts.',
      steps: [
        ['Book access', 'Agree a date with the landowner and confirm site access in writing.'],
        ['Boundary check', 'Walk the boundary with the cadastral map; photograph each marker.'],
        ['Soil sampling', 'Take six samples at 1 m depth across the plot; label with GPS position.'],
        ['Drainage assessment', 'Record standing water and slope; note culverts.'],
        ['Survey report', 'Write the report and attach photos and lab results.'],
      ],
      runs: [
        { subject: 'Plot 12, Mesa Road', daysAgo: 9, reached: 3, status: 'running' },
        { subject: 'Warehouse extension, Dock 4', daysAgo: 40, reached: 5, status: 'completed' },
        { subject: 'Plot 7, riverbank', daysAgo: 20, reached: 2, status: 'cancelled', reason: 'Landowner withdrew consent.' },
      ],
    },
    {
      name: 'Equipment handover',
      description: 'Hand heavy equipment over between crews.',
      steps: [
        ['Inspection', 'Check hours, fluids and visible damage.'],
        ['Sign-off', 'Both crew leads sign the handover sheet.'],
        ['Logbook update', 'Record the new custodian in the equipment logbook.'],
      ],
      runs: [{ subject: 'Excavator EX-220 to crew B', daysAgo: 1, reached: 1, status: 'running' }],
    },
  ],
  globex: [
    {
      name: 'Environmental permit review',
      description: 'Review an environmental permit application before filing.',
      steps: [
        ['Collect documents', 'Gather site plans, emission estimates and prior permits.'],
        ['Impact screening', 'Screen against the protected-area and water-body registers.'],
        ['Legal review', 'Counsel reviews obligations and deadlines.'],
        ['File application', 'Submit to the regional authority and record the reference number.'],
      ],
      runs: [
        { subject: 'Cypress Creek plant expansion', daysAgo: 6, reached: 2, status: 'running' },
        { subject: 'Harbor depot fuel tanks', daysAgo: 50, reached: 4, status: 'completed' },
      ],
    },
  ],
};

export const seedTerrain: DemoSeeder = async (trx, tenant, users) => {
  const scope = new TenantScope(trx, tenant.id);
  const actor = users[`member@${tenant.slug}.example`] ?? null;
  const now = Date.now();
  for (const sample of SAMPLES[tenant.slug] ?? []) {
    const workflow = await scope.insert<NewRow<DbWorkflowRow>>('terrain_workflows', {
      name: sample.name, name_key: nameKey(sample.name), description: sample.description, step_count: sample.steps.length, created_by: actor, created_at: now - 90 * DAY_MS,
    });
    for (const [index, [name, instructions]] of sample.steps.entries()) {
      await scope.insert<NewRow<DbStepRow>>('terrain_workflow_steps', { workflow_id: workflow.id, position: index + 1, name, instructions });
    }
    for (const run of sample.runs) {
      const started = now - run.daysAgo * DAY_MS;
      const finished = started + run.reached * 3_600_000;
      const row = await scope.insert<NewRow<DbRunRow>>('terrain_runs', {
        workflow_id: workflow.id, subject: run.subject, status: run.status, current_position: run.status === 'completed' ? null : run.reached, started_by: actor,
        created_at: started, updated_at: finished, completed_at: run.status === 'completed' ? finished : null,
        cancelled_at: run.status === 'cancelled' ? finished : null, cancelled_by: run.status === 'cancelled' ? actor : null, cancel_reason: run.reason ?? null,
      });
      let sequence = 0;
      const event = (action: DbRunEventRow['action'], position: number | null, at: number, note: string | null = null) =>
        scope.insert<NewRow<DbRunEventRow>>('terrain_run_events', {
          run_id: row.id, sequence: ++sequence, action, step_position: position, step_name: position ? sample.steps[position - 1][0] : null, note, user_id: actor, at,
        });
      await event('started', 1, started);
      const doneSteps = run.status === 'completed' ? run.reached : run.reached - 1;
      for (let position = 1; position <= doneSteps; position++) await event('advanced', position, started + position * 3_600_000, `Step ${position} finished.`);
      if (run.status === 'completed') await event('completed', null, finished);
      if (run.status === 'cancelled') await event('cancelled', run.reached, finished, run.reason ?? null);
    }
  }
};
