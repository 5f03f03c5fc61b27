/** harvest: salvage and intelligence (SPEC.md part 1.5). */
import { z } from 'zod';
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { defineProduct, definePrompt, defineResource, type ToolContext } from '../../../shared/catalog.js';
import { DAY_MS, nameArg } from '../common.js';
import { harvestRepository, type Condition, type Confidence, type HarvestRepository, type LotStatus } from './repository.js';
import closeLot from './tools/close_lot.js';
import createLot from './tools/create_lot.js';
import createReport from './tools/create_report.js';
import deleteLot from './tools/delete_lot.js';
import getLot from './tools/get_lot.js';
import getReport from './tools/get_report.js';
import listLots from './tools/list_lots.js';
import listReports from './tools/list_reports.js';
import searchIntel from './tools/search_intel.js';
import updateLot from './tools/update_lot.js';
import updateReport from './tools/update_report.js';

const lotResource = defineResource<HarvestRepository>({
  collection: 'lots',
  title: 'Salvage lot',
  description: 'A salvage lot: item, condition, quantity, estimated value, location and status.',
  scope: 'harvest.lots.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.lots.get(id),
});

const reportResource = defineResource<HarvestRepository>({
  collection: 'reports',
  title: 'Intelligence report',
  description: 'An intelligence report: subject, source, summary, confidence, tags and when it was observed.',
  scope: 'harvest.intel.read',
  mimeType: 'application/json',
  read: (id, { repos }) => repos.reports.get(id),
});

const intelBrief = definePrompt({
  name: 'harvest.intel_brief',
  title: 'Brief on a topic from intelligence reports',
  description:
    'Searches your intelligence reports for a topic (as harvest.search_intel does), embeds the best matches and asks for a short brief ' +
    'that weighs each report by its confidence and cites report ids.',
  scope: 'harvest.intel.read',
  args: {
    // As search_intel's query: the same words find the same reports.
    topic: nameArg(200).describe('What the brief is about, e.g. "copper prices".'),
  },
  async get({ topic }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const results = await repos.reports.search(topic, 10, 'topic');
    if (!results.length) {
      return [{ role: 'user', content: { type: 'text', text: `No intelligence report of this organization mentions "${topic}". Say so, and suggest which sources could be asked.` } }];
    }
    return [
      // Each report as its resource shows it: the search's own ranking (score, matched_terms) is the order, not part of the report.
      ...results.map(({ score, matched_terms, ...report }) => ({
        role: 'user' as const,
        content: { type: 'resource' as const, resource: { uri: resourceUri('reports', report.id), mimeType: 'application/json', text: JSON.stringify(report, null, 2) } },
      })),
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Write a brief on "${topic}" from the ${results.length} intelligence reports above (best matches first). ` +
            'Start with the three most important points. Weigh each report by its confidence and age; say where reports disagree. ' +
            'Cite report ids in brackets, and state nothing the reports do not support.',
        },
      },
    ];
  },
});

const appraiseLot = definePrompt({
  name: 'harvest.appraise_lot',
  title: 'Appraise a salvage lot',
  description: 'Embeds a salvage lot and asks for a reasoned check of its estimated value and condition, and a recommendation: sell, hold or scrap.',
  scope: 'harvest.lots.read',
  args: {
    lot_id: z.string().max(100).describe('The lot to appraise.'),
  },
  async get({ lot_id }, { repos, resourceUri }: ToolContext<HarvestRepository>) {
    const lot = await repos.lots.get(lot_id);
    return [
      { role: 'user', content: { type: 'resource', resource: { uri: resourceUri('lots', lot.id), mimeType: 'application/json', text: JSON.stringify(lot, null, 2) } } },
      {
        role: 'user',
        content: {
          type: 'text',
          text: `Appraise the salvage lot "${lot.item}" (${lot.quantity} units, condition ${lot.condition}, estimated at ${lot.estimated_value}, status ${lot.status}). ` +
            'Is the estimate plausible per unit for this condition? What would change it? Recommend sell, hold or scrap, with reasons. ' +
            `If the estimate should change, propose harvest.update_lot with lot_id ${lot.id} and the new estimated_value_minor, but do not call it without the person's approval.`,
        },
      },
    ];
  },
});

interface DemoLot { item: string; condition: Condition; quantity: number; currency: string; estimated_value_minor: number; location: string; status?: LotStatus }
interface DemoReport { subject: string; source: string; summary: string; confidence: Confidence; tags: string[]; days_ago: number }

const DEMO: Record<string, { lots: DemoLot[]; reports: DemoReport[] }> = {
  acme: {
    lots: [
      { item: 'Copper cable offcuts, 2.5 mm²', condition: 'good', quantity: 400, currency: 'USD', estimated_value_minor: 310_000, location: 'Yard B, bay 4' },
      { item: 'Decommissioned rocket sled chassis', condition: 'poor', quantity: 1, currency: 'USD', estimated_value_minor: 85_000, location: 'Hangar 2', status: 'reserved' },
      { item: 'Surplus anvils, 100 lb', condition: 'like_new', quantity: 36, currency: 'USD', estimated_value_minor: 432_000, location: 'Warehouse A' },
    ],
    reports: [
      { subject: 'Copper scrap prices', source: 'Metals desk weekly', summary: 'Bare bright copper scrap rose 6% this month on smelter demand; dealers in Phoenix quote above index.', confidence: 'high', tags: ['copper', 'pricing'], days_ago: 3 },
      { subject: 'Coyote Ventures liquidation rumour', source: 'Trade show contact', summary: 'A supplier says Coyote Ventures may liquidate its Tucson depot, including industrial magnets and rocket parts.', confidence: 'low', tags: ['coyote-ventures', 'liquidation'], days_ago: 10 },
      { subject: 'Auction calendar Q1', source: 'Regional auction house', summary: 'Three heavy-equipment auctions are planned for Q1; copper and aluminium lots are accepted until two weeks before each.', confidence: 'medium', tags: ['auctions', 'copper'], days_ago: 20 },
    ],
  },
  globex: {
    lots: [
      { item: 'Industrial magnets, 2 t', condition: 'fair', quantity: 5, currency: 'EUR', estimated_value_minor: 1_250_000, location: 'Cypress Creek depot' },
      { item: 'Server racks, 42U', condition: 'good', quantity: 12, currency: 'EUR', estimated_value_minor: 360_000, location: 'Data hall 3', status: 'sold' },
    ],
    reports: [
      { subject: 'Rare-earth magnet supply', source: 'Procurement network', summary: 'Lead times for NdFeB magnets have doubled; recycled magnets are trading at a premium in the EU.', confidence: 'medium', tags: ['magnets', 'supply-chain'], days_ago: 5 },
      { subject: 'Data centre decommissioning wave', source: 'Industry newsletter', summary: 'Two hyperscalers are retiring older halls in Frankfurt next year; expect a glut of used racks and copper cabling.', confidence: 'high', tags: ['data-centres', 'copper'], days_ago: 12 },
    ],
  },
};

const seedDemo: DemoSeeder = async (trx, tenant, users) => {
  const repo = harvestRepository(new TenantScope(trx, tenant.id));
  const createdBy = users[`admin@${tenant.slug}.example`];
  const data = DEMO[tenant.slug];
  if (!data) return;
  for (const { status, ...lot } of data.lots) {
    const created = await repo.lots.create({ ...lot, created_by: createdBy });
    if (status) await repo.lots.update(created.id, { status });
  }
  for (const { days_ago, ...report } of data.reports) await repo.reports.create({ ...report, observed_at: Date.now() - days_ago * DAY_MS, created_by: createdBy });
};

export const harvest = defineProduct<HarvestRepository>({
  id: 'harvest',
  title: 'Harvest',
  kind: 'Salvage and intelligence',
  status: 'live',
  scopes: {
    'harvest.lots.read': 'See your organization\'s salvage lots, their condition and estimated value',
    'harvest.lots.write': 'Record, change and delete salvage lots',
    'harvest.intel.read': 'Read and search your organization\'s intelligence reports',
    'harvest.intel.write': 'File and edit intelligence reports',
  },
  tools: [listLots, getLot, createLot, updateLot, closeLot, deleteLot, listReports, getReport, createReport, updateReport, searchIntel],
  resources: [lotResource, reportResource],
  prompts: [intelBrief, appraiseLot],
  entities: { lot: 'harvest_lots', report: 'harvest_reports' },
  seedDemo,
  repositories: (scope) => harvestRepository(scope),
});
