import { z } from 'zod';
import { definePrompt, type ToolContext } from '../../../../shared/catalog.js';
import { embeddedResource, granted } from '../../common.js';
import type { HeraldRepository } from '../repository.js';

/** How many published trust-center documents the review lists. */
const DOCUMENTS_SHOWN = 20;

export default definePrompt({
  name: 'herald.review_broadcast',
  title: 'Review a broadcast before sending',
  description:
    'A review of one broadcast before it goes out: its text, audience and how many subscribers it reaches now, with a checklist for tone, accuracy and the claims it makes about published trust-center documents.',
  scope: 'herald.broadcasts.read',
  args: { broadcast_id: z.string().min(1).max(200).describe('Id of the broadcast to review.') },
  get: async ({ broadcast_id }, context: ToolContext<HeraldRepository>) => {
    const { repos, tenant, resourceUri } = context;
    const broadcast = await repos.broadcasts.get(broadcast_id);
    const reach = await repos.subscribers.countAudience(broadcast.audience);
    // NDA-only documents are herald.trust.read's to show; public ones are on the trust center anyway.
    // Filtered before the limit, so newer NDA-only documents do not push the public ones out.
    const mayReadTrust = granted(context, 'herald.trust.read');
    const published = await repos.documents.list({ status: 'published', visibility: mayReadTrust ? undefined : 'public', limit: DOCUMENTS_SHOWN });
    const ndaHidden = !mayReadTrust && (await repos.documents.list({ status: 'published', visibility: 'nda', limit: 1 })).items.length > 0;
    const lines = published.items.map((d) => `- ${d.title} (${d.category}, ${d.visibility}, version ${d.version})`);
    if (!lines.length) lines.push('- none published');
    // The checklist weighs claims against this list: a cut list must say so, or a missing document reads as unpublished.
    if (published.next_cursor) lines.push(`- (only the ${DOCUMENTS_SHOWN} most recently created are listed; more are published)`);
    if (ndaHidden) lines.push('- (NDA-only documents are not shown: this connection may not read them, herald.trust.read)');
    const documents = lines.join('\n');
    return [
      {
        role: 'user' as const,
        content: {
          type: 'text' as const,
          text:
            `Review this ${broadcast.status} broadcast of ${tenant.name} before it is sent. It goes to the "${broadcast.audience}" audience, ` +
            `which has ${reach} active subscriber${reach === 1 ? '' : 's'} right now.\n\n` +
            `Title: ${broadcast.title}\n\n${broadcast.body}\n\n` +
            `Trust-center documents currently published:\n${documents}\n\n` +
            'Check: is the title clear; is the tone right for this audience; does every claim about security or compliance match a published document; ' +
            'is anything confidential (NDA-only) disclosed? Answer with a verdict (ready / needs changes) and a corrected text if changes are needed.',
        },
      },
      {
        role: 'user' as const,
        content: embeddedResource(resourceUri('broadcasts', broadcast.id), broadcast),
      },
    ];
  },
});
