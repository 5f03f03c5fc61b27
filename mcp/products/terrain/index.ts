/** terrain: domain workflows, defined as ordered steps and run one step at a time. */
import { defineProduct } from '../../../shared/catalog.js';
import { terrainRepository, type TerrainRepository } from './repository.js';
import { seedTerrain } from './seed.js';
import listWorkflows from './tools/list_workflows.js';
import getWorkflow from './tools/get_workflow.js';
import createWorkflow from './tools/create_workflow.js';
import listWorkflowRuns from './tools/list_workflow_runs.js';
import startWorkflowRun from './tools/start_workflow_run.js';
import advanceWorkflowRun from './tools/advance_workflow_run.js';
import getWorkflowRun from './tools/get_workflow_run.js';
import cancelWorkflowRun from './tools/cancel_workflow_run.js';
import runsResource from './resources/runs.js';
import workflowsResource from './resources/workflows.js';
import briefCurrentStep from './prompts/brief_current_step.js';

export const terrain = defineProduct<TerrainRepository>({
  id: 'terrain',
  title: 'Terrain',
  kind: 'Domain workflows',
  status: 'live',
  scopes: {
    'terrain.workflows.read': 'See your workflow definitions and their steps',
    'terrain.workflows.write': 'Create new workflow definitions',
    'terrain.runs.read': 'See workflow runs, where each stands and who moved it',
    'terrain.runs.write': 'Start, advance and cancel workflow runs',
  },
  tools: [listWorkflows, getWorkflow, createWorkflow, listWorkflowRuns, startWorkflowRun, advanceWorkflowRun, getWorkflowRun, cancelWorkflowRun],
  resources: [workflowsResource, runsResource],
  prompts: [briefCurrentStep],
  entities: { workflow: 'terrain_workflows', run: 'terrain_runs' },
  seedDemo: seedTerrain,
  repositories: terrainRepository,
});
