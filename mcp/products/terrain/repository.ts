/**
 * terrain's data: workflow definitions (ordered steps, immutable once created) and the runs
 * that walk through them one step at a time. Every move of a run is a conditional update on
 * its current position, so two concurrent advances cannot skip a step, and every move is
 * recorded as an event with who and when.
 */
import { AppError } from '../../../shared/errors.js';
import { translate } from '../../../db/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { iso, nameKey, pageOf, type NewRow, type Page } from '../common.js';

export const RUN_STATUSES = ['running', 'completed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface DbWorkflowRow {
  id: string;
  tenant_id: string;
  name: string;
  /** nameKey(name): unique in the tenant, so names are unique whatever their case, spacing or Unicode composition. */
  name_key: string;
  description: string | null;
  step_count: number;
  created_by: string | null;
  created_at: number;
}

export interface DbStepRow {
  id: string;
  tenant_id: string;
  workflow_id: string;
  position: number;
  name: string;
  instructions: string | null;
}

export interface DbRunRow {
  id: string;
  tenant_id: string;
  workflow_id: string;
  subject: string;
  status: RunStatus;
  current_position: number | null;
  started_by: string | null;
  created_at: number;
  updated_at: number;
  completed_at: number | null;
  cancelled_at: number | null;
  cancelled_by: string | null;
  cancel_reason: string | null;
}

export interface DbRunEventRow {
  id: string;
  tenant_id: string;
  run_id: string;
  sequence: number;
  action: 'started' | 'advanced' | 'completed' | 'cancelled';
  step_position: number | null;
  step_name: string | null;
  note: string | null;
  user_id: string | null;
  at: number;
}

const WORKFLOWS = 'terrain_workflows';
const STEPS = 'terrain_workflow_steps';
const RUNS = 'terrain_runs';
const EVENTS = 'terrain_run_events';

function workflowView(row: DbWorkflowRow, steps?: DbStepRow[]) {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    step_count: row.step_count,
    created_at: iso(row.created_at),
    ...(steps ? { steps: steps.map((s) => ({ position: s.position, name: s.name, instructions: s.instructions })) } : {}),
  };
}

function runSummary(row: DbRunRow, workflowName: string, stepCount: number) {
  return {
    id: row.id,
    workflow_id: row.workflow_id,
    workflow_name: workflowName,
    subject: row.subject,
    status: row.status,
    current_position: row.current_position,
    step_count: stepCount,
    started_at: iso(row.created_at),
    started_by: row.started_by,
    completed_at: iso(row.completed_at),
    cancelled_at: iso(row.cancelled_at),
    cancelled_by: row.cancelled_by,
    cancel_reason: row.cancel_reason,
  };
}

/** Where each step of a run stands. */
function stepState(run: DbRunRow, position: number): 'done' | 'current' | 'pending' | 'not_reached' {
  if (run.status === 'completed') return 'done';
  const current = run.current_position ?? 0;
  if (position < current) return 'done';
  if (position === current) return run.status === 'running' ? 'current' : 'not_reached';
  return run.status === 'running' ? 'pending' : 'not_reached';
}

export function terrainRepository(scope: TenantScope) {
  const stepsOf = (workflowId: string) =>
    scope.from<DbStepRow>(STEPS).where(`${STEPS}.workflow_id`, workflowId).orderBy('position', 'asc') as Promise<DbStepRow[]>;

  async function appendEvent(run: DbRunRow, event: Omit<DbRunEventRow, 'id' | 'tenant_id' | 'run_id' | 'sequence'>): Promise<void> {
    const last = (await scope.from(EVENTS).where(`${EVENTS}.run_id`, run.id).max({ sequence: 'sequence' }).first()) as { sequence: number | null } | undefined;
    await scope.insert<NewRow<DbRunEventRow>>(EVENTS, { run_id: run.id, sequence: Number(last?.sequence ?? 0) + 1, ...event });
  }

  async function runDetail(run: DbRunRow) {
    const workflow = (await scope.from<DbWorkflowRow>(WORKFLOWS).where(`${WORKFLOWS}.id`, run.workflow_id).first())!;
    const steps = await stepsOf(workflow.id);
    const events = (await scope.from<DbRunEventRow>(EVENTS).where(`${EVENTS}.run_id`, run.id).orderBy('sequence', 'asc')) as DbRunEventRow[];
    const current = run.status === 'running' ? steps.find((s) => s.position === run.current_position) : undefined;
    return {
      ...runSummary(run, workflow.name, workflow.step_count),
      current_step: current ? { position: current.position, name: current.name, instructions: current.instructions } : null,
      steps: steps.map((s) => ({ position: s.position, name: s.name, state: stepState(run, s.position) })),
      history: events.map((e) => ({ sequence: e.sequence, action: e.action, step_position: e.step_position, step_name: e.step_name, note: e.note, by: e.user_id, at: iso(e.at) })),
    };
  }

  const requireRun = (rawId: string) => scope.require<DbRunRow>(RUNS, rawId, 'workflow run');
  const requireWorkflow = (rawId: string) => scope.require<DbWorkflowRow>(WORKFLOWS, rawId, 'workflow');

  async function moveRun(run: DbRunRow, patch: Partial<DbRunRow>): Promise<DbRunRow> {
    const updated = await scope.from(RUNS).where(`${RUNS}.id`, run.id).where('status', 'running').where('current_position', run.current_position!)
      .update({ ...patch, updated_at: Date.now() });
    // Another call moved the run between our read and our update.
    if (updated !== 1) throw new AppError('conflict', `workflow run ${run.id} changed while this call ran; read it again`);
    return (await scope.from<DbRunRow>(RUNS).where(`${RUNS}.id`, run.id).first())!;
  }

  return {
    workflows: {
      async list(page: { limit?: number; cursor?: string }): Promise<Page<ReturnType<typeof workflowView>>> {
        const result = await pageOf<DbWorkflowRow>(scope.from(WORKFLOWS), WORKFLOWS, page);
        return { items: result.items.map((row) => workflowView(row)), next_cursor: result.next_cursor };
      },

      async get(rawId: string) {
        const row = await requireWorkflow(rawId);
        return workflowView(row, await stepsOf(row.id));
      },

      async create(input: { name: string; description?: string; steps: Array<{ name: string; instructions?: string }> }, userId: string) {
        const workflow = await translate(
          () => scope.insert<NewRow<DbWorkflowRow>>(WORKFLOWS, { name: input.name, name_key: nameKey(input.name), description: input.description ?? null, step_count: input.steps.length, created_by: userId, created_at: Date.now() }),
          { conflict: `a workflow named "${input.name}" already exists` },
        );
        const steps: DbStepRow[] = [];
        for (const [index, step] of input.steps.entries()) {
          steps.push(await scope.insert<NewRow<DbStepRow>>(STEPS, { workflow_id: workflow.id, position: index + 1, name: step.name, instructions: step.instructions ?? null }));
        }
        return workflowView(workflow, steps);
      },
    },

    runs: {
      async list(filter: { workflow_id?: string; status?: RunStatus; limit?: number; cursor?: string }) {
        const query = scope.from(RUNS).join(WORKFLOWS, `${WORKFLOWS}.id`, `${RUNS}.workflow_id`)
          .select(`${RUNS}.*`, `${WORKFLOWS}.name as workflow_name`, `${WORKFLOWS}.step_count as step_count`);
        if (filter.workflow_id) query.where(`${RUNS}.workflow_id`, (await requireWorkflow(filter.workflow_id)).id);
        if (filter.status) query.where(`${RUNS}.status`, filter.status);
        const result = await pageOf<DbRunRow & { workflow_name: string; step_count: number }>(query, RUNS, filter);
        return { items: result.items.map((row) => runSummary(row, row.workflow_name, row.step_count)), next_cursor: result.next_cursor };
      },

      async get(rawId: string) {
        return runDetail(await requireRun(rawId));
      },

      async start(input: { workflow_id: string; subject: string; note?: string }, userId: string) {
        const workflow = await requireWorkflow(input.workflow_id);
        const [first] = await stepsOf(workflow.id);
        const now = Date.now();
        const run = await scope.insert<NewRow<DbRunRow>>(RUNS, {
          workflow_id: workflow.id, subject: input.subject, status: 'running' as const, current_position: 1, started_by: userId,
          created_at: now, updated_at: now, completed_at: null, cancelled_at: null, cancelled_by: null, cancel_reason: null,
        });
        await appendEvent(run, { action: 'started', step_position: 1, step_name: first.name, note: input.note ?? null, user_id: userId, at: now });
        return runDetail(run);
      },

      /** Completes the current step; the run moves to the next one, or is completed after the last. */
      async advance(rawId: string, note: string | undefined, userId: string) {
        const run = await requireRun(rawId);
        if (run.status !== 'running') {
          throw new AppError('conflict', `workflow run ${run.id} is ${run.status}; only a running workflow run can be advanced`, { details: { status: run.status } });
        }
        const steps = await stepsOf(run.workflow_id);
        const position = run.current_position!;
        const step = steps.find((s) => s.position === position)!;
        const now = Date.now();
        const last = position >= steps.length;
        const moved = await moveRun(run, last ? { status: 'completed', current_position: null, completed_at: now } : { current_position: position + 1 });
        await appendEvent(moved, { action: 'advanced', step_position: position, step_name: step.name, note: note ?? null, user_id: userId, at: now });
        if (last) await appendEvent(moved, { action: 'completed', step_position: null, step_name: null, note: null, user_id: userId, at: now });
        return runDetail(moved);
      },

      async cancel(rawId: string, reason: string | undefined, userId: string) {
        const run = await requireRun(rawId);
        refuseCancel(run);
        const now = Date.now();
        const moved = await moveRun(run, { status: 'cancelled', cancelled_at: now, cancelled_by: userId, cancel_reason: reason ?? null });
        const step = (await stepsOf(run.workflow_id)).find((s) => s.position === run.current_position);
        await appendEvent(moved, { action: 'cancelled', step_position: run.current_position, step_name: step?.name ?? null, note: reason ?? null, user_id: userId, at: now });
        return runDetail(moved);
      },

      /** What cancel would refuse, refused without changing anything (before a confirmation is asked for). */
      async checkCancel(rawId: string): Promise<void> {
        refuseCancel(await requireRun(rawId));
      },
    },
  };
}

function refuseCancel(run: DbRunRow): void {
  if (run.status !== 'running') {
    throw new AppError('conflict', `workflow run ${run.id} is ${run.status}; only a running workflow run can be cancelled`, { details: { status: run.status } });
  }
}

export type TerrainRepository = ReturnType<typeof terrainRepository>;
