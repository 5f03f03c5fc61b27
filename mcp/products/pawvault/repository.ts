/**
 * pawvault's data: a household's pets (the household is the tenant) and their health records:
 * vaccinations with the date the next dose is due, vet visits and medications. Dates are
 * calendar dates, stored as UTC midnight in epoch milliseconds.
 */
import { AppError } from '../../../shared/errors.js';
import type { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, decodeCursor, EARLIEST_DATE, iso, msToDate, nameKey, pageOf, type NewRow, type Page } from '../common.js';

export const SPECIES = ['dog', 'cat', 'rabbit', 'bird', 'reptile', 'other'] as const;
export const SEXES = ['female', 'male', 'unknown'] as const;
export type Species = (typeof SPECIES)[number];
export type Sex = (typeof SEXES)[number];

export interface DbPetRow {
  id: string;
  tenant_id: string;
  name: string;
  species: Species;
  breed: string | null;
  sex: Sex | null;
  birth_date: number | null;
  microchip_number: string | null;
  weight_kg: number | null;
  notes: string | null;
  created_at: number;
  updated_at: number;
}

export interface DbVaccinationRow {
  id: string;
  tenant_id: string;
  pet_id: string;
  vaccine: string;
  /**
   * nameKey(vaccine): the same vaccine however it was spelled (case, spacing, Unicode
   * composition), as every name of Portico is compared (migrations 0024, 0028, 0029).
   */
  vaccine_key: string;
  administered_on: number;
  due_on: number | null;
  clinic: string | null;
  notes: string | null;
  created_at: number;
}

export interface DbVisitRow {
  id: string;
  tenant_id: string;
  pet_id: string;
  visited_on: number;
  clinic: string | null;
  reason: string;
  outcome: string | null;
  cost_cents: number | null;
  created_at: number;
}

export interface DbMedicationRow {
  id: string;
  tenant_id: string;
  pet_id: string;
  name: string;
  dosage: string;
  frequency: string;
  start_date: number;
  end_date: number | null;
  notes: string | null;
  created_at: number;
}

const PETS = 'pawvault_pets';
const VACCINATIONS = 'pawvault_vaccinations';
const VISITS = 'pawvault_visits';
const MEDICATIONS = 'pawvault_medications';
export const HEALTH_KINDS = ['vaccinations', 'visits', 'medications'] as const;
export type HealthKind = (typeof HEALTH_KINDS)[number];
const TABLES = { vaccinations: VACCINATIONS, visits: VISITS, medications: MEDICATIONS } as const;
/** The date each kind is listed by, newest first. */
const DATED_BY = { vaccinations: 'administered_on', visits: 'visited_on', medications: 'start_date' } as const;
/** Separates the kinds' cursors in the cursor of a listing of every kind (base64url has no '.'). */
const KIND_CURSORS = '.';

/** How many due vaccinations (the soonest) list_due_vaccinations shows. */
export const DUE_SHOWN = 500;

/** Whole years between two calendar dates (birthday not yet reached this year → one less). */
function ageInYears(birth: number, today: number): number {
  const b = new Date(birth);
  const t = new Date(today);
  const years = t.getUTCFullYear() - b.getUTCFullYear();
  const beforeBirthday = t.getUTCMonth() < b.getUTCMonth() || (t.getUTCMonth() === b.getUTCMonth() && t.getUTCDate() < b.getUTCDate());
  return Math.max(0, years - (beforeBirthday ? 1 : 0));
}

export function today(): number {
  return Math.floor(Date.now() / DAY_MS) * DAY_MS;
}

function petView(row: DbPetRow, on = today()) {
  return {
    id: row.id,
    name: row.name,
    species: row.species,
    breed: row.breed,
    sex: row.sex,
    birth_date: msToDate(row.birth_date),
    age_years: row.birth_date === null ? null : ageInYears(row.birth_date, on),
    microchip_number: row.microchip_number,
    weight_kg: row.weight_kg,
    notes: row.notes,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
  };
}

function vaccinationView(row: DbVaccinationRow) {
  return { id: row.id, pet_id: row.pet_id, vaccine: row.vaccine, administered_on: msToDate(row.administered_on), due_on: msToDate(row.due_on), clinic: row.clinic, notes: row.notes };
}

function visitView(row: DbVisitRow) {
  return { id: row.id, pet_id: row.pet_id, visited_on: msToDate(row.visited_on), clinic: row.clinic, reason: row.reason, outcome: row.outcome, cost_cents: row.cost_cents };
}

function medicationView(row: DbMedicationRow, on = today()) {
  return {
    id: row.id, pet_id: row.pet_id, name: row.name, dosage: row.dosage, frequency: row.frequency,
    start_date: msToDate(row.start_date), end_date: msToDate(row.end_date), notes: row.notes,
    active: row.start_date <= on && (row.end_date === null || row.end_date >= on),
  };
}

const HEALTH_VIEWS: Record<HealthKind, (row: any, on: number) => unknown> = { vaccinations: vaccinationView, visits: visitView, medications: medicationView };

export type PetView = ReturnType<typeof petView>;

export interface PetFields {
  name?: string;
  species?: Species;
  breed?: string | null;
  sex?: Sex | null;
  birth_date?: number | null;
  microchip_number?: string | null;
  weight_kg?: number | null;
  notes?: string | null;
}

/** A birth date is a day that has come (UTC, as a dose's administered_on): a later one is refused, never read as age 0. */
function refuseUnborn(birthDate: number | null | undefined): void {
  if (birthDate != null && birthDate > today()) throw new AppError('invalid_arguments', 'birth_date: cannot be in the future', { details: { field: 'birth_date' } });
}

export function pawvaultRepository(scope: TenantScope) {
  const requirePet = (rawId: string) => scope.require<DbPetRow>(PETS, rawId, 'pet');
  const ofPet = <Row>(table: string, petId: string, dateColumn: string, limit: number) =>
    scope.from(table).where(`${table}.pet_id`, petId).orderBy([{ column: dateColumn, order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit) as Promise<Row[]>;

  async function records(pet: DbPetRow, limit: number) {
    const on = today();
    return {
      vaccinations: (await ofPet<DbVaccinationRow>(VACCINATIONS, pet.id, 'administered_on', limit)).map(vaccinationView),
      visits: (await ofPet<DbVisitRow>(VISITS, pet.id, 'visited_on', limit)).map(visitView),
      medications: (await ofPet<DbMedicationRow>(MEDICATIONS, pet.id, 'start_date', limit)).map((m) => medicationView(m, on)),
    };
  }

  /**
   * Each kind's cursor in `cursor` (null: that kind has no more), refused unless it continues a
   * listing of the same kinds of this pet: each names one of the pet's records of its kind, at the
   * date it is listed by (as people's history checks its cursors).
   */
  async function cursorsOf(pet: DbPetRow, kinds: readonly HealthKind[], cursor: string): Promise<Array<string | null>> {
    const refused = () => new AppError('invalid_arguments', `cursor: not a cursor of this pet's ${kinds.length === 1 ? kinds[0] : 'health records'}`, { details: { field: 'cursor' } });
    const parts = cursor.split(KIND_CURSORS);
    if (parts.length !== kinds.length || parts.every((part) => part === '')) throw refused();
    const cursors: Array<string | null> = [];
    for (const [i, part] of parts.entries()) {
      if (part === '') {
        cursors.push(null);
        continue;
      }
      const { at, id } = decodeCursor(part, undefined, EARLIEST_DATE);
      const table = TABLES[kinds[i]];
      const own = await scope.from(table).where(`${table}.pet_id`, pet.id).where(`${table}.id`, id).where(`${table}.${DATED_BY[kinds[i]]}`, at).first('id');
      if (!own) throw refused();
      cursors.push(part);
    }
    return cursors;
  }

  const countOf = async (table: string, petId: string) =>
    Number(((await scope.from(table).where(`${table}.pet_id`, petId).count({ n: '*' }).first()) as { n: number | string } | undefined)?.n ?? 0);

  return {
    pets: {
      async list(filter: { species?: Species; limit?: number; cursor?: string }): Promise<Page<PetView>> {
        const query = scope.from(PETS);
        if (filter.species) query.where(`${PETS}.species`, filter.species);
        const page = await pageOf<DbPetRow>(query, PETS, filter);
        const on = today();
        return { items: page.items.map((row) => petView(row, on)), next_cursor: page.next_cursor };
      },

      async get(rawId: string, recordLimit = 20) {
        const pet = await requirePet(rawId);
        return { ...petView(pet), ...(await records(pet, recordLimit)) };
      },

      async add(input: PetFields & { name: string; species: Species }) {
        refuseUnborn(input.birth_date);
        const now = Date.now();
        const row = await scope.insert<NewRow<DbPetRow>>(PETS, {
          name: input.name, species: input.species, breed: input.breed ?? null, sex: input.sex ?? null, birth_date: input.birth_date ?? null,
          microchip_number: input.microchip_number ?? null, weight_kg: input.weight_kg ?? null, notes: input.notes ?? null, created_at: now, updated_at: now,
        });
        return petView(row);
      },

      async update(rawId: string, patch: PetFields) {
        refuseUnborn(patch.birth_date);
        // Locked first and read as it is now: a pet deleted while this call waited is not_found.
        const pet = await scope.requireLocked<DbPetRow>(PETS, rawId, 'pet');
        const changes = Object.fromEntries(Object.entries(patch).filter(([, value]) => value !== undefined));
        if (Object.keys(changes).length) await scope.update(PETS, pet.id, { ...changes, updated_at: Date.now() });
        return petView((await scope.from<DbPetRow>(PETS).where(`${PETS}.id`, pet.id).first())!);
      },

      /** Removes the pet and every health record of it. */
      async delete(rawId: string) {
        // Locked first: a record being written for the pet lands before (and is counted here) or finds no pet.
        const pet = await scope.requireLocked<DbPetRow>(PETS, rawId, 'pet');
        const removed = {
          vaccinations: await scope.from(VACCINATIONS).where(`${VACCINATIONS}.pet_id`, pet.id).delete(),
          visits: await scope.from(VISITS).where(`${VISITS}.pet_id`, pet.id).delete(),
          medications: await scope.from(MEDICATIONS).where(`${MEDICATIONS}.pet_id`, pet.id).delete(),
        };
        await scope.delete(PETS, pet.id);
        return { id: pet.id, name: pet.name, deleted: true, records_deleted: removed };
      },

      counts: async (petId: string) => ({
        vaccinations: await countOf(VACCINATIONS, petId), visits: await countOf(VISITS, petId), medications: await countOf(MEDICATIONS, petId),
      }),
    },

    health: {
      /**
       * The medications a pet is on today (started, not ended), newest start first, at most
       * `limit` and whether more are: however many finished courses were started since.
       */
      async currentMedications(petId: string, limit: number) {
        const on = today();
        const rows = (await scope.from(MEDICATIONS).where(`${MEDICATIONS}.pet_id`, petId).where('start_date', '<=', on)
          .where((q) => q.whereNull('end_date').orWhere('end_date', '>=', on))
          .orderBy([{ column: 'start_date', order: 'desc' }, { column: 'id', order: 'desc' }]).limit(limit + 1)) as DbMedicationRow[];
        return { medications: rows.slice(0, limit).map((m) => medicationView(m, on)), truncated: rows.length > limit };
      },

      /**
       * One page of a pet's records of one kind, or of every kind at once: each kind's next `limit`,
       * newest first and ties by id (pageOf on its date), with how many there are and whether more
       * follow. The cursor of one kind is pageOf's; that of every kind joins theirs in HEALTH_KINDS
       * order, empty for a kind that has no more, so that one cursor reads a pet's records whole.
       */
      async list(rawPetId: string, filter: { kind?: HealthKind; limit: number; cursor?: string }) {
        const pet = await requirePet(rawPetId);
        const kinds = filter.kind ? [filter.kind] : HEALTH_KINDS;
        const after = filter.cursor === undefined ? undefined : await cursorsOf(pet, kinds, filter.cursor);
        const on = today();
        const shown: Record<string, unknown> = {};
        const next: Array<string | null> = [];
        for (const [i, kind] of kinds.entries()) {
          const table = TABLES[kind];
          const page = after?.[i] === null ? { items: [], next_cursor: null }
            : await pageOf<any>(scope.from(table).where(`${table}.pet_id`, pet.id), table, { limit: filter.limit, cursor: after?.[i] }, DATED_BY[kind], undefined, EARLIEST_DATE);
          Object.assign(shown, { [kind]: page.items.map((row) => HEALTH_VIEWS[kind](row, on)), [`${kind}_total`]: await countOf(table, pet.id), [`${kind}_truncated`]: page.next_cursor !== null });
          next.push(page.next_cursor);
        }
        const next_cursor = next.every((cursor) => cursor === null) ? null : next.map((cursor) => cursor ?? '').join(KIND_CURSORS);
        return { pet: { id: pet.id, name: pet.name, species: pet.species }, ...shown, next_cursor };
      },

      async recordVaccination(rawPetId: string, input: { vaccine: string; administered_on: number; due_on?: number; clinic?: string; notes?: string }) {
        const pet = await requirePet(rawPetId);
        if (input.due_on !== undefined && input.due_on <= input.administered_on) {
          throw new AppError('invalid_arguments', 'due_on: must be after administered_on', { details: { field: 'due_on' } });
        }
        if (input.administered_on > today()) throw new AppError('invalid_arguments', 'administered_on: cannot be in the future', { details: { field: 'administered_on' } });
        const row = await scope.insert<NewRow<DbVaccinationRow>>(VACCINATIONS, {
          pet_id: pet.id, vaccine: input.vaccine, vaccine_key: nameKey(input.vaccine), administered_on: input.administered_on, due_on: input.due_on ?? null,
          clinic: input.clinic ?? null, notes: input.notes ?? null, created_at: Date.now(),
        });
        return vaccinationView(row);
      },

      async recordVisit(rawPetId: string, input: { visited_on: number; reason: string; clinic?: string; outcome?: string; cost_cents?: number }) {
        const pet = await requirePet(rawPetId);
        const row = await scope.insert<NewRow<DbVisitRow>>(VISITS, {
          pet_id: pet.id, visited_on: input.visited_on, reason: input.reason, clinic: input.clinic ?? null, outcome: input.outcome ?? null,
          cost_cents: input.cost_cents ?? null, created_at: Date.now(),
        });
        return visitView(row);
      },

      async addMedication(rawPetId: string, input: { name: string; dosage: string; frequency: string; start_date: number; end_date?: number; notes?: string }) {
        const pet = await requirePet(rawPetId);
        if (input.end_date !== undefined && input.end_date < input.start_date) {
          throw new AppError('invalid_arguments', 'end_date: must not be before start_date', { details: { field: 'end_date' } });
        }
        const row = await scope.insert<NewRow<DbMedicationRow>>(MEDICATIONS, {
          pet_id: pet.id, name: input.name, dosage: input.dosage, frequency: input.frequency, start_date: input.start_date,
          end_date: input.end_date ?? null, notes: input.notes ?? null, created_at: Date.now(),
        });
        return medicationView(row);
      },

      /**
       * Vaccinations whose next dose is due within `within_days` of today, or overdue. Only the latest
       * dose of each vaccine for each pet counts: a booster given since replaces the earlier due date.
       */
      async dueVaccinations(filter: { within_days: number; pet_id?: string; include_overdue: boolean }) {
        const on = today();
        const petId = filter.pet_id ? (await requirePet(filter.pet_id)).id : undefined;
        const horizon = on + filter.within_days * DAY_MS;
        // Doses due in the window that no later dose of the same vaccine (vaccine_key) for the same
        // pet replaces, found in SQL: a household records doses for years, and most are replaced.
        const dueQuery = () => {
          const query = scope.from(VACCINATIONS).join(PETS, `${PETS}.id`, `${VACCINATIONS}.pet_id`)
            .whereNotNull(`${VACCINATIONS}.due_on`).where(`${VACCINATIONS}.due_on`, '<=', horizon)
            .whereNotExists((later) => later.select(1).from(`${VACCINATIONS} as later`)
              .whereRaw(`later.tenant_id = ${VACCINATIONS}.tenant_id and later.pet_id = ${VACCINATIONS}.pet_id and later.vaccine_key = ${VACCINATIONS}.vaccine_key`)
              .where((after) => after.whereRaw(`later.administered_on > ${VACCINATIONS}.administered_on`)
                .orWhereRaw(`later.administered_on = ${VACCINATIONS}.administered_on and later.created_at > ${VACCINATIONS}.created_at`)
                .orWhereRaw(`later.administered_on = ${VACCINATIONS}.administered_on and later.created_at = ${VACCINATIONS}.created_at and later.id > ${VACCINATIONS}.id`)));
          if (!filter.include_overdue) query.where(`${VACCINATIONS}.due_on`, '>=', on);
          if (petId) query.where(`${VACCINATIONS}.pet_id`, petId);
          return query;
        };
        const rows = (await dueQuery().select(`${VACCINATIONS}.*`, `${PETS}.name as pet_name`, `${PETS}.species as species`)
          .orderBy([{ column: `${VACCINATIONS}.due_on`, order: 'asc' }, { column: `${VACCINATIONS}.id`, order: 'asc' }])
          .limit(DUE_SHOWN + 1)) as Array<DbVaccinationRow & { pet_name: string; species: Species }>;
        const truncated = rows.length > DUE_SHOWN;
        const counted = truncated ? (await dueQuery().count({ n: '*' }).first()) as { n: number | string } | undefined : undefined;
        const due = rows.slice(0, DUE_SHOWN)
          .sort((a, b) => a.due_on! - b.due_on! || a.pet_name.localeCompare(b.pet_name))
          .map((row) => {
            const days = Math.round((row.due_on! - on) / DAY_MS);
            return {
              pet_id: row.pet_id, pet_name: row.pet_name, species: row.species, vaccine: row.vaccine, vaccination_id: row.id,
              last_given_on: msToDate(row.administered_on), due_on: msToDate(row.due_on), days_until_due: days, status: days < 0 ? 'overdue' as const : 'due_soon' as const,
            };
          });
        return { as_of: msToDate(on), within_days: filter.within_days, due, due_total: truncated ? Number(counted?.n ?? 0) : due.length, due_truncated: truncated };
      },
    },
  };
}

export type PawvaultRepository = ReturnType<typeof pawvaultRepository>;
