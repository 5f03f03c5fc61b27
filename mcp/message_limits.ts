/**
 * Shape limits on an incoming JSON-RPC message, checked once after parsing and before anything
 * walks it: tool arguments are shallow, so depth beyond MAX_DEPTH is hostile (recursive code
 * further on — digests, logging, the SDK's validation — would overflow the stack), and
 * `__proto__` keys are refused outright (checklist R9) rather than left to whoever copies the
 * object next, where they would turn into a prototype.
 */
import { AppError } from '../shared/errors.js';

const MAX_DEPTH = 64;

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

/**
 * A JSON-RPC 2.0 message as MCP uses it (MCP basic protocol, "Messages"): a request or
 * notification has a string method, object params if any, and a request's id is a string or an
 * integer, never null; anything else is a response (result or error). Refused as -32600 Invalid
 * Request; the SDK's transport would call it a parse error (-32700), which is for bodies that are
 * not JSON. What the params of a method must hold is the method's own schema (mcp/host.ts).
 */
export function assertJsonRpc(message: Record<string, unknown>): void {
  const refuse = (why: string): never => {
    throw new AppError('invalid_request', `not a JSON-RPC 2.0 message: ${why}`);
  };
  if (message.jsonrpc !== '2.0') refuse('"jsonrpc" must be "2.0"');
  if ('method' in message) {
    if (typeof message.method !== 'string' || !message.method) refuse('"method" must be a non-empty string');
    if ('id' in message && !(typeof message.id === 'string' || Number.isSafeInteger(message.id))) refuse('"id" must be a string or an integer');
    const params = message.params;
    if ('params' in message && (params === null || typeof params !== 'object' || Array.isArray(params))) refuse('"params" must be an object');
    return;
  }
  if (!('id' in message) || !('result' in message || 'error' in message)) refuse('a message has a "method", or an "id" with a "result" or an "error"');
}
