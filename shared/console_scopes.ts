/**
 * The customer console's JSON API is itself an OAuth-protected resource of Portico (DESIGN.md §8):
 * resource `{api_url}/mcp`, with these scopes. Declared once here so that the authorization server
 * (scopes_supported, consent page) and the console (scope checks) read the same list.
 */
export const CONSOLE_PRODUCT = 'console';

export const CONSOLE_SCOPES: Readonly<Record<string, string>> = {
  'console.connections.read': 'See the connections of your organization: which apps can reach which products, and when they were last used',
  'console.connections.write': 'Revoke connections of your organization, cutting off the apps that use them',
  'console.audit.read': "Read and export your organization's audit log",
};

/** The console API's resource indicator (RFC 8707) for a given `{api_url}`. */
export function consoleResource(apiUrl: string): string {
  return `${apiUrl.replace(/\/+$/, '')}/mcp`;
}
