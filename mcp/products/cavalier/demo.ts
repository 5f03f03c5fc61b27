/** cavalier's sample rows for the demo tenants: each gets its own pipeline, quotes and a statement of work. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS } from '../common.js';
import { cavalierRepository, type DealStage, type LineItemInput, type QuoteStatus } from './repository.js';

interface DemoDeal {
  title: string;
  customer: string;
  currency: string;
  value_minor: number;
  path: DealStage[];
  quotes: Array<{ lines: LineItemInput[]; tax_rate_bp: number; path: QuoteStatus[] }>;
  sow?: { title: string; scope_summary: string; milestones: Array<{ title: string; in_days: number; amount_minor: number }> };
}

const DATA: Record<string, DemoDeal[]> = {
  acme: [
    {
      title: 'Warehouse robotics retrofit', customer: 'Road Runner Logistics', currency: 'USD', value_minor: 18_500_000,
      path: ['qualified', 'proposal', 'won'],
      quotes: [{
        tax_rate_bp: 825, path: ['sent', 'accepted'],
        lines: [
          { description: 'Pick-and-place arm, model R2', quantity: 4, unit_price_minor: 3_200_000 },
          { description: 'Installation and calibration (days)', quantity: 12, unit_price_minor: 180_000 },
          { description: 'Operator training seat', quantity: 8, unit_price_minor: 45_000 },
        ],
      }],
      sow: {
        title: 'Robotics retrofit, phase 1', scope_summary: 'Install and calibrate four R2 arms in the Tucson warehouse; train eight operators. Conveyor changes are out of scope.',
        milestones: [
          { title: 'Site survey and layout sign-off', in_days: 14, amount_minor: 2_000_000 },
          { title: 'Arms installed and calibrated', in_days: 45, amount_minor: 12_000_000 },
          { title: 'Operator training complete', in_days: 60, amount_minor: 2_440_000 },
        ],
      },
    },
    {
      title: 'Anvil supply contract 2027', customer: 'Coyote Ventures', currency: 'USD', value_minor: 4_200_000, path: ['qualified', 'proposal'],
      quotes: [{ tax_rate_bp: 0, path: ['sent'], lines: [{ description: 'Anvil, 100 lb, cast iron', quantity: 300, unit_price_minor: 14_000 }] }],
    },
    { title: 'Rocket skates pilot', customer: 'Desert Sports Ltd', currency: 'USD', value_minor: 950_000, path: [], quotes: [{ tax_rate_bp: 600, path: [], lines: [{ description: 'Rocket skates, pair', quantity: 10, unit_price_minor: 95_000 }] }] },
  ],
  globex: [
    {
      title: 'Plant automation audit', customer: 'Cypress Creek Utilities', currency: 'EUR', value_minor: 7_800_000, path: ['qualified', 'proposal'],
      quotes: [{
        tax_rate_bp: 1900, path: ['sent'],
        lines: [
          { description: 'Control-system audit (days)', quantity: 15, unit_price_minor: 120_000 },
          { description: 'Report and remediation plan', quantity: 1, unit_price_minor: 600_000 },
        ],
      }],
      sow: {
        title: 'Automation audit', scope_summary: 'Audit the SCADA estate of two plants and deliver a prioritised remediation plan. Remediation work itself is out of scope.',
        milestones: [
          { title: 'Plant A audit', in_days: 21, amount_minor: 900_000 },
          { title: 'Plant B audit and final report', in_days: 42, amount_minor: 1_500_000 },
        ],
      },
    },
    { title: 'Magnet supply framework', customer: 'Hank Scorpio Holdings', currency: 'EUR', value_minor: 25_000_000, path: ['lost'], quotes: [{ tax_rate_bp: 1900, path: ['sent', 'rejected'], lines: [{ description: 'Industrial magnet, 2 t', quantity: 25, unit_price_minor: 1_000_000 }] }] },
    { title: 'Monorail feasibility study', customer: 'North Haverbrook Council', currency: 'GBP', value_minor: 3_000_000, path: ['qualified'], quotes: [] },
  ],
};

export const seedCavalierDemo: DemoSeeder = async (trx, tenant, users) => {
  const repo = cavalierRepository(new TenantScope(trx, tenant.id));
  const createdBy = users[`admin@${tenant.slug}.example`];
  for (const demo of DATA[tenant.slug] ?? []) {
    const deal = await repo.deals.create({ title: demo.title, customer: demo.customer, currency: demo.currency, value_minor: demo.value_minor, expected_close_at: Date.now() + 30 * DAY_MS, created_by: createdBy });
    // Quotes are made while the deal is open, as in life: a lost deal takes no new quote.
    for (const q of demo.quotes) {
      const quote = await repo.quotes.create({ deal_id: deal.id, currency: demo.currency, tax_rate_bp: q.tax_rate_bp, line_items: q.lines, valid_until: Date.now() + 30 * DAY_MS, created_by: createdBy });
      for (const status of q.path) await repo.quotes.setStatus(quote.id, status);
    }
    for (const stage of demo.path) await repo.deals.setStage(deal.id, stage);
    if (demo.sow) {
      await repo.sows.create({
        deal_id: deal.id, title: demo.sow.title, scope_summary: demo.sow.scope_summary, created_by: createdBy,
        milestones: demo.sow.milestones.map((m) => ({ title: m.title, amount_minor: m.amount_minor, due_date: new Date(Date.now() + m.in_days * DAY_MS).toISOString().slice(0, 10) })),
      });
    }
  }
};
