import { z } from 'zod';
import { defineTool, type ToolContext } from '../../../../shared/catalog.js';
import type { AegisRepository } from '../repository.js';

export default defineTool({
  name: 'aegis.delete_scan',
  title: 'Delete a posture scan',
  description:
    'Permanently deletes one scan and all of its findings, including who resolved them and their resolution notes. Needs scan_id; ' +
    'destructive, so the first call returns confirmation_required and the deletion happens only when the same call is repeated with ' +
    'confirmed: true. Returns how many findings were deleted. Does not touch the connections or members the scan looked at.',
  scope: 'aegis.scans.write',
  destructive: true,
  confirmation: 'Scan {scan_id} and all of its findings, with their resolution notes, will be permanently deleted.',
  input: {
    scan_id: z.string().max(100).describe('The scan id.'),
  },
  async handler({ scan_id }, { repos }: ToolContext<AegisRepository>) {
    return repos.scans.delete(scan_id);
  },
});
