/**
 * Summarises a V8 CPU profile (`node --cpu-prof`, or `npm run bench -- --profile DIR`): self time
 * by package or project file, and the hottest functions. Usage: tsx bench/profile_summary.ts FILE [TOP]
 */
import fs from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, topArg] = process.argv.slice(2);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const top = Number(topArg ?? 25);
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** Where a frame lives: a package under node_modules, a node: built-in, or a project file. */
function area(url: string, name: string): string {
  if (!url) return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url.split('/')[0].replace(/^node:internal.*/, 'node:internal');
  const project = /\/work\/[^/]+\/(.*)$/.exec(url.replace(/^file:\/\//, ''));
  return project ? project[1] : url;
}

const areas = new Map<string, number>();
const functions = new Map<string, number>();
for (const [id, time] of self) {
  const node = byId.get(id)!;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = area(url, functionName);
  areas.set(where, (areas.get(where) ?? 0) + time);
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  functions.set(key, (functions.get(key) ?? 0) + time);
}
const pct = (t: number) => `${((100 * t) / total).toFixed(1).padStart(5)} %`;
console.log(`total sampled ${(total / 1e6).toFixed(2)} s`);
console.log('\nself time by area');
for (const [name, t] of [...areas].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${name}`);
console.log('\nhottest functions (self)');
for (const [name, t] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${name}`);

// Inclusive time (self + callees) of the project's own functions: where a request's time goes.
const inclusive = new Map<number, number>();
const total_of = (id: number): number => {
  const cached = inclusive.get(id);
  if (cached !== undefined) return cached;
  const node = byId.get(id)!;
  const sum = (self.get(id) ?? 0) + (node.children ?? []).reduce((acc, child) => acc + total_of(child), 0);
  inclusive.set(id, sum);
  return sum;
};
const byFunction = new Map<string, number>();
for (const node of profile.nodes) {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = area(url, functionName);
  if (!/\.ts$/.test(where) && !where.startsWith('dist/') && !where.includes('/dist/')) continue;
  const key = `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
  // A function on the stack twice (recursion) would count twice; the project's hot path has none.
  byFunction.set(key, (byFunction.get(key) ?? 0) + total_of(node.id));
}
console.log('\nproject functions, inclusive');
for (const [name, t] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${name}`);
