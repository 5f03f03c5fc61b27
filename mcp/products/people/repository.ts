/**
 * people's data: profiles, onboarding checklists and the lifecycle events that make up a
 * person's history. Every change to a person writes an event in the same transaction, numbered
 * per person, so the history reads back in the order things happened.
 */
import { AppError } from '../../../shared/errors.js';
import { translate } from '../../../db/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { changedFields, DAY_MS, decodeCursor, EARLIEST_DATE, INT4_MAX, iso, LATEST_DATE, msToDate, pageOf, whereContains, whereEqualsFolded, type NewRow, type Page } from '../common.js';

export const PERSON_STATUSES = ['pre_hire', 'onboarding', 'active', 'offboarded'] as const;
export const TASK_OWNERS = ['hr', 'it', 'manager', 'person'] as const;
export type PersonStatus = (typeof PERSON_STATUSES)[number];
export type TaskOwner = (typeof TASK_OWNERS)[number];

export interface DbProfileRow {
  id: string;
  tenant_id: string;
  full_name: string;
  email: string;
  job_title: string | null;
  department: string | null;
  location: string | null;
  manager_id: string | null;
  status: PersonStatus;
  start_date: number | null;
  end_date: number | null;
  created_at: number;
  updated_at: number;
}

export interface DbLifecycleEventRow {
  id: string;
  tenant_id: string;
  person_id: string;
  sequence: number;
  kind: string;
  detail: string | null;
  actor_user_id: string | null;
  at: number;
}

export interface DbTaskRow {
  id: string;
  tenant_id: string;
  person_id: string;
  position: number;
  title: string;
  owner: TaskOwner;
  status: 'open' | 'done' | 'cancelled';
  due_date: number | null;
  completed_at: number | null;
  completed_by: string | null;
}

const PROFILES = 'people_profiles';
const EVENTS = 'people_lifecycle_events';
const TASKS = 'people_onboarding_tasks';

/** How many of a person's lifecycle events one page of their history shows, at most and by default. */
export const HISTORY_SHOWN = 500;

/** The checklist a new hire gets unless the caller brings its own; days are relative to the start date. */
export const DEFAULT_CHECKLIST: ReadonlyArray<{ title: string; owner: TaskOwner; due_in_days: number }> = [
  { title: 'Sign the employment contract', owner: 'hr', due_in_days: -7 },
  { title: 'Create accounts and e-mail address', owner: 'it', due_in_days: -3 },
  { title: 'Prepare laptop and equipment', owner: 'it', due_in_days: -1 },
  { title: 'Welcome meeting and first-week plan', owner: 'manager', due_in_days: 0 },
  { title: 'Complete security awareness training', owner: 'person', due_in_days: 7 },
  { title: '30-day check-in', owner: 'manager', due_in_days: 30 },
];

function profileView(row: DbProfileRow) {
  return {
    id: row.id,
    full_name: row.full_name,
    email: row.email,
    job_title: row.job_title,
    department: row.department,
    location: row.location,
    manager_id: row.manager_id,
    status: row.status,
    start_date: msToDate(row.start_date),
    end_date: msToDate(row.end_date),
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function taskView(row: DbTaskRow) {
  return {
    id: row.id,
    position: row.position,
    title: row.title,
    owner: row.owner,
    status: row.status,
    due_date: msToDate(row.due_date),
    completed_at: iso(row.completed_at),
    completed_by: row.completed_by,
  };
}

export type ProfileView = ReturnType<typeof profileView>;

export interface ProfileFields {
  full_name?: string;
  email?: string;
  job_title?: string | null;
  department?: string | null;
  location?: string | null;
  manager_id?: string | null;
  start_date?: number | null;
}

function refuseOffboard(row: DbProfileRow, lastDay: number): void {
  if (row.status === 'offboarded') throw new AppError('conflict', `person ${row.id} is already offboarded`, { details: { status: row.status } });
  if (row.start_date !== null && lastDay < Number(row.start_date)) {
    throw new AppError('invalid_arguments', `last_day: ${msToDate(lastDay)} is before the start date ${msToDate(Number(row.start_date))}`, { details: { field: 'last_day' } });
  }
}

export function peopleRepository(scope: TenantScope) {
  const requirePerson = (rawId: string) => scope.require<DbProfileRow>(PROFILES, rawId, 'person');
  const reload = async (id: string) => (await scope.from<DbProfileRow>(PROFILES).where(`${PROFILES}.id`, id).first())!;
  const tasksOf = (personId: string) =>
    scope.from<DbTaskRow>(TASKS).where(`${TASKS}.person_id`, personId).orderBy('position', 'asc') as Promise<DbTaskRow[]>;

  async function record(personId: string, kind: string, detail: Record<string, unknown>, actor: string | null, at = Date.now()): Promise<void> {
    const last = (await scope.from(EVENTS).where(`${EVENTS}.person_id`, personId).max({ sequence: 'sequence' }).first()) as { sequence: number | null } | undefined;
    await scope.insert<NewRow<DbLifecycleEventRow>>(EVENTS, {
      person_id: personId, sequence: Number(last?.sequence ?? 0) + 1, kind, detail: JSON.stringify(detail), actor_user_id: actor, at,
    });
  }

  /** The manager id to store, after checking it is a person here and creates no reporting loop. */
  async function resolveManager(rawManagerId: string, personId?: string): Promise<string> {
    // Locked and read as they are now: an offboarding of the manager ends before this call (and is
    // seen here) or starts after it, and then moves this report to the manager's manager too.
    // FOR SHARE: an offboarding of someone else that moves their reports to this manager (a foreign
    // key's KEY SHARE, while it holds the person this call locks next) must not wait for it.
    const manager = await scope.requireLocked<DbProfileRow>(PROFILES, rawManagerId, 'manager', 'share');
    if (manager.status === 'offboarded') throw new AppError('conflict', `manager ${manager.id} has been offboarded`);
    let cursor: DbProfileRow | undefined = manager;
    for (let depth = 0; cursor && depth < 1000; depth++) {
      if (cursor.id === personId) throw new AppError('conflict', 'that manager would make a reporting loop (the person would end up managing themselves)');
      cursor = cursor.manager_id ? await scope.from<DbProfileRow>(PROFILES).where(`${PROFILES}.id`, cursor.manager_id).first() : undefined;
    }
    return manager.id;
  }

  async function detail(row: DbProfileRow) {
    const manager = row.manager_id ? await scope.from<DbProfileRow>(PROFILES).where(`${PROFILES}.id`, row.manager_id).first() : undefined;
    const reports = (await scope.from(PROFILES).where(`${PROFILES}.manager_id`, row.id).whereNot('status', 'offboarded').count({ n: '*' }).first()) as { n: number | string } | undefined;
    const tasks = await tasksOf(row.id);
    return {
      ...profileView(row),
      manager: manager ? { id: manager.id, full_name: manager.full_name } : null,
      direct_reports: Number(reports?.n ?? 0),
      onboarding_tasks: tasks.map(taskView),
    };
  }

  return {
    profiles: {
      async list(filter: { status?: PersonStatus; department?: string; manager_id?: string; query?: string; limit?: number; cursor?: string }): Promise<Page<ProfileView>> {
        const query = scope.from(PROFILES);
        if (filter.status) query.where(`${PROFILES}.status`, filter.status);
        if (filter.department) whereEqualsFolded(query, `${PROFILES}.department`, filter.department);
        if (filter.manager_id) query.where(`${PROFILES}.manager_id`, (await scope.require<DbProfileRow>(PROFILES, filter.manager_id, 'manager')).id);
        if (filter.query) {
          const text = filter.query;
          query.where((q) => {
            whereContains(q, `${PROFILES}.full_name`, text);
            q.orWhere((or) => whereContains(or, `${PROFILES}.email`, text));
          });
        }
        const page = await pageOf<DbProfileRow>(query, PROFILES, filter);
        return { items: page.items.map(profileView), next_cursor: page.next_cursor };
      },

      async get(rawId: string) {
        return detail(await requirePerson(rawId));
      },

      async create(input: ProfileFields & { full_name: string; email: string; status: 'pre_hire' | 'active' }, actor: string) {
        const now = Date.now();
        const managerId = input.manager_id ? await resolveManager(input.manager_id) : null;
        const row = await translate(
          () => scope.insert<NewRow<DbProfileRow>>(PROFILES, {
            full_name: input.full_name, email: input.email.trim().toLowerCase(), job_title: input.job_title ?? null, department: input.department ?? null,
            location: input.location ?? null, manager_id: managerId, status: input.status, start_date: input.start_date ?? null, end_date: null, created_at: now, updated_at: now,
          }),
          { conflict: `a person with the e-mail ${input.email} already exists` },
        );
        await record(row.id, 'profile_created', { status: row.status, job_title: row.job_title, department: row.department }, actor, now);
        return detail(row);
      },

      async update(rawId: string, patch: ProfileFields, actor: string) {
        const found = await requirePerson(rawId);
        const closed = (status: PersonStatus) => new AppError('conflict', `person ${found.id} has been offboarded; their profile is closed`, { details: { status } });
        if (found.status === 'offboarded') throw closed(found.status);
        const changes: Partial<DbProfileRow> = {};
        for (const [field, value] of Object.entries(patch) as Array<[keyof ProfileFields, unknown]>) {
          if (value === undefined) continue;
          if (field === 'manager_id') changes.manager_id = value === null ? null : await resolveManager(value as string, found.id);
          else if (field === 'email') changes.email = (value as string).trim().toLowerCase();
          else (changes as Record<string, unknown>)[field] = value;
        }
        // The person locked (after the manager, the order offboard takes them in) and read as they
        // are now: an offboarding that committed meanwhile closed the profile, and the history's
        // "from" values are the ones this change replaces.
        const row = (await scope.lock<DbProfileRow>(PROFILES, found.id))!;
        if (row.status === 'offboarded') throw closed(row.status);
        const changed = Object.fromEntries(
          Object.entries(changedFields(row, changes)).map(([field, value]) => {
            const from = row[field as keyof DbProfileRow];
            return field === 'start_date' ? [field, { from: msToDate(from as number | null), to: msToDate(value as number | null) }] : [field, { from, to: value }];
          }),
        );
        if (Object.keys(changed).length === 0) return detail(row);
        await translate(() => scope.update(PROFILES, row.id, { ...changes, updated_at: Date.now() }), { conflict: `a person with the e-mail ${String(changes.email)} already exists` });
        await record(row.id, 'profile_updated', { changes: changed }, actor);
        return detail(await reload(row.id));
      },
    },

    lifecycle: {
      async startOnboarding(rawId: string, input: { start_date?: number; tasks?: Array<{ title: string; owner: TaskOwner; due_in_days?: number }> }, actor: string) {
        // Locked first and read as it is now: a start date changed while this call waited is the one
        // onboarding keeps and counts the checklist from.
        const row = await scope.requireLocked<DbProfileRow>(PROFILES, rawId, 'person');
        if (row.status !== 'pre_hire') {
          throw new AppError('conflict', `person ${row.id} is ${row.status}; onboarding starts only for a person in pre_hire`, { details: { status: row.status } });
        }
        const startDate = input.start_date ?? row.start_date;
        if (startDate == null) throw new AppError('invalid_arguments', 'start_date: the person has no start date; give one', { details: { field: 'start_date' } });
        const checklist = input.tasks ?? DEFAULT_CHECKLIST;
        // A due date must be a date the wire form can say (YYYY-MM-DD, years 0100-9999).
        const dues = checklist.flatMap((task) => (task.due_in_days === undefined ? [] : [startDate + task.due_in_days * DAY_MS]));
        if (dues.some((due) => due > LATEST_DATE || due < EARLIEST_DATE)) {
          throw new AppError('invalid_arguments', `start_date: the checklist's due dates from ${msToDate(startDate)} fall outside 0100-01-01 to 9999-12-31`, { details: { field: 'start_date' } });
        }
        await scope.update(PROFILES, row.id, { status: 'onboarding', start_date: startDate, updated_at: Date.now() });
        for (const [index, task] of checklist.entries()) {
          await scope.insert<NewRow<DbTaskRow>>(TASKS, {
            person_id: row.id, position: index + 1, title: task.title, owner: task.owner, status: 'open',
            due_date: task.due_in_days === undefined ? null : startDate + task.due_in_days * DAY_MS, completed_at: null, completed_by: null,
          });
        }
        await record(row.id, 'onboarding_started', { start_date: msToDate(startDate), tasks: checklist.length }, actor);
        return detail(await reload(row.id));
      },

      /** Ticks one onboarding task; the last open task makes the person active. */
      async completeTask(rawTaskId: string, actor: string) {
        const found = await scope.require<DbTaskRow>(TASKS, rawTaskId, 'task');
        const now = Date.now();
        // The person's row first, guarded by their status: completions of one person's tasks then run
        // one after another, so each numbers the history after the last and sees which tasks are still open.
        const locked = await scope.from(PROFILES).where(`${PROFILES}.id`, found.person_id).where('status', 'onboarding').update({ updated_at: now });
        const person = await reload(found.person_id);
        if (locked !== 1) throw new AppError('conflict', `person ${person.id} is ${person.status}; only tasks of a person in onboarding can be completed`, { details: { status: person.status } });
        const task = (await scope.from<DbTaskRow>(TASKS).where(`${TASKS}.id`, found.id).first())!;
        if (task.status !== 'open') throw new AppError('conflict', `task ${task.id} is ${task.status}`, { details: { status: task.status } });
        const updated = await scope.from(TASKS).where(`${TASKS}.id`, task.id).where('status', 'open').update({ status: 'done', completed_at: now, completed_by: actor });
        if (updated !== 1) throw new AppError('conflict', `task ${task.id} changed while this call ran; read it again`);
        await record(person.id, 'onboarding_task_completed', { task_id: task.id, title: task.title, owner: task.owner }, actor, now);
        const open = (await scope.from(TASKS).where(`${TASKS}.person_id`, person.id).where('status', 'open').count({ n: '*' }).first()) as { n: number | string } | undefined;
        if (Number(open?.n ?? 0) === 0) {
          await scope.from(PROFILES).where(`${PROFILES}.id`, person.id).where('status', 'onboarding').update({ status: 'active', updated_at: now });
          await record(person.id, 'onboarding_completed', {}, actor, now);
        }
        return detail(await reload(person.id));
      },

      async offboard(rawId: string, input: { last_day: number; reason: string }, actor: string) {
        // Locked first and read as they are now: a change of their manager made meanwhile is where the reports go.
        const row = await scope.requireLocked<DbProfileRow>(PROFILES, rawId, 'person');
        refuseOffboard(row, input.last_day);
        const now = Date.now();
        await scope.update(PROFILES, row.id, { status: 'offboarded', end_date: input.last_day, updated_at: now });
        const cancelled = await scope.from(TASKS).where(`${TASKS}.person_id`, row.id).where('status', 'open').update({ status: 'cancelled' });
        // Direct reports move up to the departing person's own manager, so nobody reports to someone who left.
        const reports = (await scope.from<DbProfileRow>(PROFILES).where(`${PROFILES}.manager_id`, row.id).whereNot('status', 'offboarded')) as DbProfileRow[];
        for (const report of reports) {
          await scope.update(PROFILES, report.id, { manager_id: row.manager_id, updated_at: now });
          await record(report.id, 'profile_updated', { changes: { manager_id: { from: row.id, to: row.manager_id } }, because: 'manager offboarded' }, actor, now);
        }
        await record(row.id, 'offboarded', {
          last_day: msToDate(input.last_day), reason: input.reason, previous_status: row.status, tasks_cancelled: cancelled, reports_reassigned: reports.map((r) => r.id),
        }, actor, now);
        return { ...(await detail(await reload(row.id))), tasks_cancelled: cancelled, reports_reassigned_to: row.manager_id, reports_reassigned: reports.map((r) => r.id) };
      },

      /** What offboard would refuse, refused without locking or changing anything (before a confirmation is asked for). */
      async checkOffboard(rawId: string, lastDay: number): Promise<void> {
        refuseOffboard(await requirePerson(rawId), lastDay);
      },

      /**
       * One page of a person's events, shown oldest first: the newest `limit` before the cursor, keyed
       * by sequence (then id, as pageOf keys), so pages go back in time. Every profile change adds an
       * event, so a history has no natural end. A cursor must name one of this person's events: none
       * pages into another person's (or tenant's) history.
       */
      async history(rawId: string, page: { limit?: number; cursor?: string }) {
        const row = await requirePerson(rawId);
        const ofPerson = scope.from(EVENTS).where(`${EVENTS}.person_id`, row.id);
        if (page.cursor) {
          const after = decodeCursor(page.cursor, INT4_MAX);
          const own = await ofPerson.clone().where(`${EVENTS}.id`, after.id).where(`${EVENTS}.sequence`, after.at).first('id');
          if (!own) throw new AppError('invalid_arguments', "cursor: not a cursor of this person's history", { details: { field: 'cursor' } });
        }
        const { items, next_cursor } = await pageOf<DbLifecycleEventRow>(ofPerson.clone(), EVENTS, { limit: page.limit ?? HISTORY_SHOWN, cursor: page.cursor }, 'sequence', INT4_MAX);
        const whole = !page.cursor && !next_cursor;
        const counted = whole ? undefined : (await ofPerson.clone().count({ n: '*' }).first()) as { n: number | string } | undefined;
        return {
          person: { id: row.id, full_name: row.full_name, status: row.status },
          events: items.reverse().map((e) => ({ sequence: e.sequence, kind: e.kind, at: iso(e.at), by: e.actor_user_id, detail: e.detail ? JSON.parse(e.detail) : {} })),
          events_total: whole ? items.length : Number(counted?.n ?? 0),
          events_truncated: next_cursor !== null,
          next_cursor,
        };
      },
    },
  };
}

export type PeopleRepository = ReturnType<typeof peopleRepository>;
