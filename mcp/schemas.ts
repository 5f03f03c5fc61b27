/**
 * What the model sees of each tool, compiled once from the catalog: the strict zod object that
 * validates arguments and the JSON Schema published in tools/list and list_tools. Destructive
 * tools get `confirmed` added here, so no product declares it (SPEC.md part 2: every destructive
 * tool accepts `confirmed`).
 */
import { z } from 'zod';
import { annotationsOf, type ProductDefinition, type PromptDefinition, type ToolDefinition } from '../shared/catalog.js';
import { AppError } from '../shared/errors.js';

const CONFIRMED_DESCRIPTION =
  'Set to true only when repeating this exact call after a person confirmed the action that the first call described (code confirmation_required).';

export interface CompiledTool {
  product: ProductDefinition<any>;
  tool: ToolDefinition<any, any>;
  schema: z.ZodObject<any>;
  /** JSON Schema of the input, as MCP tools/list and the public list_tools show it. */
  inputSchema: Record<string, unknown> & { type: 'object' };
  annotations: ReturnType<typeof annotationsOf>;
}

/**
 * Compiled tools by definition: what a tool compiles to depends on its definition alone, so a
 * process that starts Portico more than once (a test process starts many servers) compiles each
 * tool once. Converting to JSON Schema is most of a start's own work (15-35 ms for 95 tools).
 */
const compiled = new WeakMap<ToolDefinition<any, any>, CompiledTool>();

export function compileTool(product: ProductDefinition<any>, tool: ToolDefinition<any, any>): CompiledTool {
  const known = compiled.get(tool);
  if (known?.product === product) return known;
  const made = compileAnew(product, tool);
  compiled.set(tool, made);
  return made;
}

function compileAnew(product: ProductDefinition<any>, tool: ToolDefinition<any, any>): CompiledTool {
  const shape = tool.destructive ? { ...tool.input, confirmed: z.boolean().optional().describe(CONFIRMED_DESCRIPTION) } : { ...tool.input };
  // Strict: an unknown field is a mistake worth naming, not something to drop silently (checklist I7).
  const schema = z.strictObject(shape);
  const { $schema: _dialect, ...inputSchema } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // Shared by every start in the process: frozen, so that no caller can change another's.
  return Object.freeze({ product, tool, schema, inputSchema: deepFreeze(inputSchema) as CompiledTool['inputSchema'], annotations: Object.freeze(annotationsOf(tool)) });
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

export function compilePromptArgs(prompt: PromptDefinition<any, any>): z.ZodObject<any> {
  return z.strictObject({ ...prompt.args });
}

/** Parses arguments or throws invalid_arguments naming the first offending field. */
export function parseArguments<T>(schema: z.ZodType<T>, raw: unknown): T {
  const result = schema.safeParse(raw ?? {});
  if (result.success) {
    const field = nulField(result.data);
    if (field !== undefined) throw new AppError('invalid_arguments', `invalid arguments: ${field}: text must not contain U+0000`, { details: { field, issues: [{ field, message: 'text must not contain U+0000' }] } });
    return result.data;
  }
  const issues = result.error.issues.slice(0, 10).map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? (issue as { keys: string[] }).keys : [];
    const path = [...issue.path.map(String), ...keys.slice(0, 1)];
    const field = path.join('.') || '(arguments)';
    const message = issue.code === 'unrecognized_keys' ? 'is not an argument of this tool' : issue.message;
    return { field, message };
  });
  const first = issues[0] ?? { field: '(arguments)', message: 'invalid' };
  throw new AppError('invalid_arguments', `invalid arguments: ${first.field}: ${first.message}`, { details: { field: first.field, issues } });
}

/**
 * The first string holding U+0000, by its path. PostgreSQL cannot store that character in text,
 * so it is refused on every database, naming the field, before a handler runs. (Depth is bounded
 * by the message's shape limit, mcp/message_limits.ts.)
 */
function nulField(value: unknown, path = ''): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') ? path || '(arguments)' : undefined;
  if (!value || typeof value !== 'object') return undefined;
  for (const [key, child] of Object.entries(value)) {
    const field = nulField(child, path ? `${path}.${key}` : key);
    if (field !== undefined) return field;
  }
  return undefined;
}
