/** Demo rows for pawvault: each demo tenant is a household with pets and health records, some vaccinations due or overdue. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS } from '../common.js';
import { pawvaultRepository, today, type Sex, type Species } from './repository.js';

interface SamplePet {
  name: string;
  species: Species;
  breed: string;
  sex: Sex;
  bornDaysAgo: number;
  microchip?: string;
  weight: number;
  notes?: string;
  /** [vaccine, given days ago, next dose due in days (negative: overdue)] */
  vaccinations: Array<[string, number, number | null]>;
  visits: Array<[daysAgo: number, reason: string, outcome: string, costCents: number]>;
  medications: Array<[name: string, dosage: string, frequency: string, startedDaysAgo: number, endsInDays: number | null]>;
}

const SAMPLES: Record<string, SamplePet[]> = {
  acme: [
    {
      name: 'Biscuit', species: 'dog', breed: 'Beagle', sex: 'male', bornDaysAgo: 6 * 365, microchip: '985112003456789', weight: 12.4, notes: 'Allergic to chicken.',
      vaccinations: [['Rabies', 340, 25], ['DHPP', 400, -35], ['Leptospirosis', 730, -365], ['Leptospirosis', 300, 65]],
      visits: [[300, 'Annual check-up', 'Healthy; booster for leptospirosis given.', 8500], [45, 'Limping on the front left leg', 'Mild arthritis; carprofen prescribed.', 12000]],
      medications: [['Carprofen', '25 mg', 'twice daily with food', 45, null], ['Amoxicillin', '250 mg', 'twice daily', 200, -190]],
    },
    {
      name: 'Miso', species: 'cat', breed: 'Domestic shorthair', sex: 'female', bornDaysAgo: 3 * 365, weight: 4.1,
      vaccinations: [['FVRCP', 355, 10], ['Rabies', 120, 245]],
      visits: [[120, 'Vaccination and dental check', 'Mild tartar; dental cleaning suggested within a year.', 6500]],
      medications: [],
    },
  ],
  globex: [
    {
      name: 'Luna', species: 'dog', breed: 'Border Collie', sex: 'female', bornDaysAgo: 2 * 365, microchip: '941000024681357', weight: 17.8,
      vaccinations: [['Rabies', 360, 5], ['DHPP', 360, 5], ['Kennel cough', 100, 265]],
      visits: [[360, 'Puppy booster series complete', 'All vaccinations up to date.', 9500]],
      medications: [['NexGard Spectra', '1 chew', 'monthly', 300, null]],
    },
    {
      name: 'Pixel', species: 'rabbit', breed: 'Netherland Dwarf', sex: 'male', bornDaysAgo: 4 * 365, weight: 1.1, notes: 'Indoor rabbit; hay-based diet.',
      vaccinations: [['RHDV2', 380, -15], ['Myxomatosis', 380, -15]],
      visits: [[90, 'Overgrown incisors', 'Teeth trimmed; check again in 3 months.', 4500]],
      medications: [],
    },
  ],
};

export const seedPawvault: DemoSeeder = async (trx, tenant) => {
  const repos = pawvaultRepository(new TenantScope(trx, tenant.id));
  const day = today();
  const ago = (days: number) => day - days * DAY_MS;
  for (const sample of SAMPLES[tenant.slug] ?? []) {
    const pet = await repos.pets.add({
      name: sample.name, species: sample.species, breed: sample.breed, sex: sample.sex, birth_date: ago(sample.bornDaysAgo),
      microchip_number: sample.microchip, weight_kg: sample.weight, notes: sample.notes,
    });
    for (const [vaccine, givenDaysAgo, dueInDays] of sample.vaccinations) {
      await repos.health.recordVaccination(pet.id, { vaccine, administered_on: ago(givenDaysAgo), due_on: dueInDays === null ? undefined : day + dueInDays * DAY_MS, clinic: 'Riverside Vet Clinic' });
    }
    for (const [daysAgo, reason, outcome, cost] of sample.visits) {
      await repos.health.recordVisit(pet.id, { visited_on: ago(daysAgo), reason, outcome, clinic: 'Riverside Vet Clinic', cost_cents: cost });
    }
    for (const [name, dosage, frequency, startedDaysAgo, endsInDays] of sample.medications) {
      await repos.health.addMedication(pet.id, { name, dosage, frequency, start_date: ago(startedDaysAgo), end_date: endsInDays === null ? undefined : day + endsInDays * DAY_MS });
    }
  }
};
