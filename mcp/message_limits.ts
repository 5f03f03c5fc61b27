/**
 * Shape limits on an incoming JSON-RPC message, checked once after parsing and before anything
 * walks it: tool arguments are shallow, so depth beyond MAX_DEPTH is hostile (recursive code
 * further on — digests, logging, the SDK's validation — would overflow the stack), and
 * `__proto__` keys are refused outright (checklist R9) rather than left to whoever copies the
 * object next, where they would turn into a prototype.
 */
import { AppError } from '../shared/errors.js';

export const MAX_DEPTH = 64;

export function assertMessageShape(message: unknown): void {
  // Iterative on purpose: the point is to survive inputs that would overflow a recursive walk.
  const stack: Array<[unknown, number]> = [[message, 1]];
  while (stack.length) {
    const [value, depth] = stack.pop()!;
    if (!value || typeof value !== 'object') continue;
    if (depth > MAX_DEPTH) throw new AppError('invalid_request', `the message is nested deeper than ${MAX_DEPTH} levels`);
    // Only objects and arrays go on the stack: scalars have nothing to walk.
    if (Array.isArray(value)) {
      for (const item of value) if (item && typeof item === 'object') stack.push([item, depth + 1]);
      continue;
    }
    for (const key of Object.keys(value)) {
      if (key === '__proto__') throw new AppError('invalid_request', 'the key "__proto__" is not accepted');
      const child = (value as Record<string, unknown>)[key];
      if (child && typeof child === 'object') stack.push([child, depth + 1]);
    }
  }
}
