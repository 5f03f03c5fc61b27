/**
 * Makes one value that satisfies a JSON Schema (the subset zod emits for tool inputs): the
 * catalog-wide tests use it to reach every tool's later checks with valid arguments, so a new
 * tool is covered without anyone writing its arguments by hand.
 */
type Schema = Record<string, any>;

const PATTERN_CANDIDATES = ['USD', 'EUR', 'a', 'A', 'abc', 'ab-1', '1', '12', '2026-01-15', '2026-01-15T10:00:00Z', '10:00', 'x@example.com', 'https://example.com', '#ffffff', 'v1', 'GET', '/v1/items'];

export function sample(schema: Schema, path = '$'): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants)) return sample(variants.find((v: Schema) => v.type !== 'null') ?? variants[0], path);
  if (Array.isArray(schema.allOf)) return sample(Object.assign({}, ...schema.allOf), path);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'string':
      return sampleString(schema, path);
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
      const max = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
      let value = min ?? (max !== undefined ? Math.min(1, max) : 1);
      if (type === 'integer') value = Math.ceil(value);
      return value;
    }
    case 'boolean':
      return false;
    case 'null':
      return null;
    case 'array': {
      const count = Math.max(schema.minItems ?? 0, 1);
      return Array.from({ length: Math.min(count, schema.maxItems ?? count) }, (_, i) => sample(schema.items ?? {}, `${path}[${i}]`));
    }
    case 'object':
    default: {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.properties?.[key] ?? {}, `${path}.${key}`);
      return out;
    }
  }
}

function sampleString(schema: Schema, path: string): string {
  const fit = (value: string) => {
    const min = schema.minLength ?? 0;
    const max = schema.maxLength ?? Infinity;
    const padded = value.length < min ? value + 'x'.repeat(min - value.length) : value;
    return padded.slice(0, max);
  };
  switch (schema.format) {
    case 'date': return '2026-01-15';
    case 'date-time': return '2026-01-15T10:00:00.000Z';
    case 'email': return 'someone@example.com';
    case 'uri':
    case 'url': return 'https://example.com/';
    case 'uuid': return '00000000-0000-4000-8000-000000000000';
  }
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    const match = PATTERN_CANDIDATES.map(fit).find((candidate) => pattern.test(candidate));
    if (match === undefined) throw new Error(`no sample for ${path}: pattern ${schema.pattern}`);
    return match;
  }
  return fit('sample');
}
