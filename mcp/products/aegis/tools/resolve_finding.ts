import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.resolve_finding',
  title: 'Resolve a finding',
  description:
    'Marks an open finding of your organization as resolved, recording who resolved it, when, and an optional note (e.g. what was ' +
    'done). Needs finding_id. Resolving an already resolved finding changes nothing and returns it with already_resolved: true. ' +
    'Only records the decision: it does not revoke connections or change roles, so fix the cause first.',
  scope: 'aegis.findings.write',
  destructive: false,
  idempotent: true,
  input: {
    finding_id: z.string().max(100).describe('The finding id.'),
    note: z.string().trim().min(1).max(1000).optional().describe('Why it is resolved, e.g. "revoked the connection".'),
  },
  async handler({ finding_id, note }, { repos, user, resourceUri }: ToolContext<AegisRepository>) {
    const finding = await repos.findings.resolve(finding_id, user.id, note ?? null);
    return { ...finding, uri: resourceUri('findings', finding.id) };
  },
});
