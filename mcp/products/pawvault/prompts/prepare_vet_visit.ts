import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { embeddedResource, granted } from '../../common.js';
import type { PawvaultRepository } from '../repository.js';
import { petAsGranted } from '../granted.js';

/** How many current medications the briefing lists. */
const CURRENT_MEDICATIONS_SHOWN = 50;

export default definePrompt({
  name: 'pawvault.prepare_vet_visit',
  title: 'Prepare a vet visit',
  description:
    'A briefing to take to the vet for one pet: vaccinations due or overdue, current medications and recent visits, with questions worth ' +
    'asking, and the pet\'s profile (breed, age, weight, notes) when the connection may read profiles (pawvault.pets.read).',
  scope: 'pawvault.health.read',
  args: {
    pet_id: z.string().min(1).max(200).describe('Id of the pet.'),
    reason: z.string().max(500).optional().describe('Why the pet is going to the vet.'),
  },
  get: async ({ pet_id, reason }, context: ToolContext<PawvaultRepository>) => {
    const { repos, resourceUri } = context;
    // Read as its resource reads it, so that the copy embedded below is what that URI returns.
    const pet = await repos.pets.get(pet_id);
    // The profile (breed, age, weight, microchip, notes) is pawvault.pets.read's to show (pawvault.get_pet);
    // health.read alone sees what list_health_records shows: the pet's name and species, and its records.
    const mayReadProfile = granted(context, 'pawvault.pets.read');
    const due = await repos.health.dueVaccinations({ within_days: 60, pet_id: pet.id, include_overdue: true });
    const dueLines = [
      ...due.due.map((d) => `- ${d.vaccine}: due ${d.due_on} (${d.status === 'overdue' ? `${-d.days_until_due} days overdue` : `in ${d.days_until_due} days`})`),
      ...(due.due_truncated ? [`- (${due.due.length} of ${due.due_total} listed)`] : []),
    ].join('\n') || '- nothing due in the next 60 days';
    // Every medication the pet is on, however many finished courses were started since the oldest.
    const current = await repos.health.currentMedications(pet.id, CURRENT_MEDICATIONS_SHOWN);
    const meds = [
      ...current.medications.map((m) => `- ${m.name} ${m.dosage}, ${m.frequency}`),
      ...(current.truncated ? [`- (only the ${CURRENT_MEDICATIONS_SHOWN} started most recently are listed; the pet is on more)`] : []),
    ].join('\n') || '- none';
    const visits = (pet.visits ?? []).slice(0, 3).map((v) => `- ${v.visited_on}: ${v.reason}${v.outcome ? ` → ${v.outcome}` : ''}`).join('\n') || '- none recorded';
    const who = mayReadProfile
      ? `${pet.name}, a ${pet.age_years ?? 'unknown'}-year-old ${pet.breed ? `${pet.breed} ` : ''}${pet.species}${pet.weight_kg ? ` weighing ${pet.weight_kg} kg` : ''}`
      : `${pet.name}, a ${pet.species} (this connection may not read the pet's profile: pawvault.pets.read)`;
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Help me prepare a vet visit for ${who}. Reason for the visit: ${reason ?? 'routine check-up'}.\n\n` +
            `Vaccinations due or overdue:\n${dueLines}\n\nCurrent medications:\n${meds}\n\nRecent visits:\n${visits}\n\n` +
            (mayReadProfile ? `Notes: ${pet.notes ?? 'none'}\n\n` : '') +
            'Write a short summary I can hand to the vet, the vaccinations to ask about at this visit, and questions worth asking about the medications and the reason for the visit.',
        },
      },
      // The pet as its resource shows it (portico://pawvault/pets/{id}, pawvault.pets.read).
      ...(mayReadProfile ? [{
        role: 'user' as const,
        content: embeddedResource(resourceUri('pets', pet.id), petAsGranted(context, pet)),
      }] : []),
    ];
  },
});
