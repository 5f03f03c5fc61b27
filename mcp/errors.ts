/**
 * How AppErrors travel over MCP (DESIGN.md §7): JSON-RPC errors carry
 * `{ code, message, data: { code: "<snake_case>", request_id } }`; some codes also fix the HTTP
 * status of the response (403 for scope and tenant refusals, 401 for tokens).
 */
import { AppError, toAppError, type ErrorCode } from '../shared/errors.js';

/** JSON-RPC error codes. -32602/-32603/-32600/-32700 are JSON-RPC's own; -32002 is MCP's "resource not found". */
const JSON_RPC_CODES: Partial<Record<ErrorCode, number>> = {
  invalid_json: -32700,
  invalid_request: -32600,
  // The SDK's own transport answers a method it does not serve with -32000 too.
  method_not_allowed: -32000,
  unknown_tool: -32602,
  invalid_arguments: -32602,
  invalid_token: -32010,
  connection_revoked: -32010,
  insufficient_scope: -32003,
  forbidden_cross_tenant: -32003,
  forbidden: -32003,
  rate_limited: -32029,
  payload_too_large: -32013,
  unsupported_media_type: -32015,
  timeout: -32004,
  unavailable: -32005,
  internal: -32603,
};

export interface JsonRpcErrorBody {
  jsonrpc: '2.0';
  id: string | number | null;
  error: { code: number; message: string; data: { code: ErrorCode; request_id: string; [key: string]: unknown } };
}

/** The JSON-RPC `error` member for an AppError; `not_found` of a resource is MCP's -32002. */
export function jsonRpcErrorOf(thrown: unknown, requestId: string, kind: 'tool' | 'resource' | 'prompt' | 'transport' = 'transport') {
  const error = toAppError(thrown);
  const code = error.code === 'not_found' ? (kind === 'resource' ? -32002 : -32602) : (JSON_RPC_CODES[error.code] ?? (error.status >= 500 ? -32603 : -32600));
  return {
    code,
    message: error.expose ? error.message : 'internal error',
    data: { code: error.code, request_id: requestId, ...(error.expose && error.details ? error.details : {}) },
  };
}

export function jsonRpcErrorBody(thrown: unknown, requestId: string, id: string | number | null = null, kind?: 'tool' | 'resource' | 'prompt'): JsonRpcErrorBody {
  return { jsonrpc: '2.0', id, error: jsonRpcErrorOf(thrown, requestId, kind) as JsonRpcErrorBody['error'] };
}

/** Errors a tool reports in its result (isError) rather than as a JSON-RPC error: the model can act on them. */
export function isToolResultError(error: AppError): boolean {
  return error.expose && !['unknown_tool', 'invalid_arguments', 'insufficient_scope', 'forbidden_cross_tenant', 'invalid_token', 'connection_revoked', 'rate_limited', 'timeout', 'unavailable'].includes(error.code);
}
