/** Demo rows for herald: subscribers, broadcasts in every state, trust-center documents. */
import type { DemoSeeder } from '../../../db/demo.js';
import { TenantScope } from '../../../db/tenant_scope.js';
import { DAY_MS, type NewRow } from '../common.js';
import type { Audience, DbBroadcastRow, DbDocumentRow, DbSubscriberRow, DocumentCategory, Segment, Visibility } from './repository.js';

interface Sample {
  subscribers: Array<[email: string, name: string, segment: Segment, unsubscribedDaysAgo?: number]>;
  broadcasts: Array<{ title: string; body: string; audience: Audience; status: 'draft' | 'scheduled' | 'sent'; daysAgo: number; inDays?: number; recipients?: number }>;
  documents: Array<{ title: string; category: DocumentCategory; visibility: Visibility; body: string; published: boolean; version: number; daysAgo: number }>;
}

const SAMPLES: Record<string, Sample> = {
  acme: {
    subscribers: [
      ['ops@roadrunner-logistics.example', 'Roadrunner Logistics', 'customers'],
      ['it@desert-supply.example', 'Desert Supply Co.', 'customers'],
      ['cto@mesa-freight.example', 'Mesa Freight', 'customers'],
      ['old@canyon-tools.example', 'Canyon Tools', 'customers', 20],
      ['alliances@anvil-partners.example', 'Anvil Partners', 'partners'],
      ['all-staff@acme.example', 'Acme staff', 'internal'],
    ],
    broadcasts: [
      { title: 'Q3 release: faster quote approvals', body: 'Quotes now route to approvers automatically. Read the notes in your dashboard.', audience: 'customers', status: 'sent', daysAgo: 12, recipients: 4 },
      { title: 'Planned maintenance, Saturday 02:00 UTC', body: 'The API will be read-only for up to 30 minutes during a database upgrade.', audience: 'everyone', status: 'scheduled', daysAgo: 2, inDays: 5 },
      { title: 'Partner pricing for 2027', body: 'Draft: new partner tiers and margins, pending finance review.', audience: 'partners', status: 'draft', daysAgo: 1 },
    ],
    documents: [
      { title: 'Information Security Policy', category: 'policy', visibility: 'public', body: 'Acme protects customer data with encryption at rest and in transit, least-privilege access and quarterly access reviews.', published: true, version: 3, daysAgo: 200 },
      { title: 'SOC 2 Type II report 2026', category: 'report', visibility: 'nda', body: 'Independent auditor report covering security and availability, period January to June 2026.', published: true, version: 1, daysAgo: 60 },
      { title: 'Subprocessors', category: 'subprocessors', visibility: 'public', body: 'Cloud hosting (EU region), transactional e-mail, error monitoring.', published: true, version: 2, daysAgo: 90 },
      { title: 'Incident response FAQ', category: 'faq', visibility: 'public', body: 'How we detect, triage and tell you about security incidents (draft).', published: false, version: 0, daysAgo: 3 },
    ],
  },
  globex: {
    subscribers: [
      ['procurement@initech.example', 'Initech', 'customers'],
      ['security@umbrella.example', 'Umbrella Health', 'customers'],
      ['channel@hooli-resellers.example', 'Hooli Resellers', 'partners'],
      ['team@globex.example', 'Globex team', 'internal'],
    ],
    broadcasts: [
      { title: 'ISO 27001 certification achieved', body: 'Globex is now ISO/IEC 27001:2022 certified. The certificate is in our trust center.', audience: 'everyone', status: 'sent', daysAgo: 30, recipients: 4 },
      { title: 'New data residency options', body: 'Draft: customers can soon choose US or EU storage.', audience: 'customers', status: 'draft', daysAgo: 4 },
    ],
    documents: [
      { title: 'ISO/IEC 27001:2022 certificate', category: 'certification', visibility: 'public', body: 'Certificate number GX-27001-2291, scope: the Globex platform and its operations.', published: true, version: 1, daysAgo: 30 },
      { title: 'Acceptable Use Policy', category: 'policy', visibility: 'public', body: 'What customers may and may not do with the Globex platform.', published: true, version: 4, daysAgo: 400 },
      { title: 'Penetration test summary 2026', category: 'report', visibility: 'nda', body: 'Summary of the annual external penetration test: no critical findings, two medium findings fixed.', published: false, version: 0, daysAgo: 7 },
    ],
  },
};

export const seedHerald: DemoSeeder = async (trx, tenant, users) => {
  const sample = SAMPLES[tenant.slug];
  if (!sample) return;
  const scope = new TenantScope(trx, tenant.id);
  const author = users[`admin@${tenant.slug}.example`] ?? null;
  const now = Date.now();
  for (const [email, name, segment, unsubscribedDaysAgo] of sample.subscribers) {
    await scope.insert<NewRow<DbSubscriberRow>>('herald_subscribers', { email, name, segment, created_at: now - 120 * DAY_MS, unsubscribed_at: unsubscribedDaysAgo === undefined ? null : now - unsubscribedDaysAgo * DAY_MS });
  }
  for (const b of sample.broadcasts) {
    const created = now - b.daysAgo * DAY_MS;
    await scope.insert<NewRow<DbBroadcastRow>>('herald_broadcasts', {
      title: b.title, body: b.body, audience: b.audience, status: b.status,
      scheduled_for: b.status === 'scheduled' ? now + (b.inDays ?? 1) * DAY_MS : b.status === 'sent' ? created + DAY_MS : null,
      sent_at: b.status === 'sent' ? created + DAY_MS : null, sent_by: b.status === 'sent' ? author : null,
      recipients_count: b.status === 'sent' ? b.recipients ?? 0 : null, created_by: author, created_at: created, updated_at: created,
    });
  }
  for (const d of sample.documents) {
    const created = now - d.daysAgo * DAY_MS;
    await scope.insert<NewRow<DbDocumentRow>>('herald_documents', {
      title: d.title, category: d.category, visibility: d.visibility, body: d.body, status: d.published ? 'published' : 'draft', version: d.version,
      published_at: d.published ? created + DAY_MS : null, published_by: d.published ? author : null, created_by: author, created_at: created, updated_at: created,
    });
  }
};
