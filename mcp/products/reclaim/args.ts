/** Argument shapes shared by reclaim's create and update tools. */
import { z } from 'zod';
import { nameArg } from '../common.js';
import { TARGET_KINDS } from './repository.js';

export const policyFields = {
  name: nameArg(120).describe('Name of the policy, unique in your organization whatever its case and spacing.'),
  target_kind: z.enum(TARGET_KINDS).describe('What is protected: database, file_share, object_bucket, virtual_machine or saas_workspace.'),
  target_name: nameArg(200).describe('Which one, e.g. "orders-db" or "finance share".'),
  retention_days: z.number().int().min(1).max(3650).describe('How long each snapshot is kept, in days (1-3650).'),
  rpo_minutes: z.number().int().min(5).max(10_080).describe('Recovery point objective: the most data, in minutes, a restore may lose; a snapshot is taken this often (5-10080).'),
};
