/**
 * Client policy: who may register, which redirect URIs are acceptable, and how a client's kind
 * (pre-registered, self-registered, metadata document) is known without trusting its metadata.
 */
import { randomBytes } from 'node:crypto';
import type { Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { ClientKind } from '../db/grant_store.js';
import { UNSHOWABLE } from '../shared/unshowable.js';

/** Ids minted by the admin CLI and by dynamic registration; a client can never choose its own. */
const REGISTERED_PREFIX = 'reg_';
export const DYNAMIC_PREFIX = 'dcr_';

export const MAX_REDIRECT_URIS = 10;
export const MAX_METADATA_BYTES = 16 * 1024;
/** Client metadata is a few levels deep (jwks.keys[].x5c[]); deeper is hostile, and JSON.stringify would overflow the stack. */
const MAX_METADATA_DEPTH = 64;
/** What a consent page and the console can show of a client's name. */
const MAX_CLIENT_NAME = 200;

/**
 * Scripts with letters that look alike (Cyrillic `о`, Greek `ο` and Latin `o`): a word mixing them
 * reads as a name it is not (`Gооgle`, `Pаypal`), so it is refused; words of different scripts
 * side by side (`Google Диск`) are not mixed. Browsers show such domain labels as punycode for the
 * same reason (UTS #39 §5.2, "Moderately Restrictive", which allows no Latin with Cyrillic or Greek).
 */
const LOOKALIKE_SCRIPTS: Array<[string, RegExp]> = [['Latin', /\p{Script=Latin}/u], ['Greek', /\p{Script=Greek}/u], ['Cyrillic', /\p{Script=Cyrillic}/u]];

/**
 * Why a client_name cannot be shown, if it cannot: it must read as what it is on the consent page
 * and in the console, whether the client registered itself or an operator added it (auth/admin.ts).
 * Compatibility characters (those Unicode NFKC replaces: full-width, mathematical and circled
 * letters, ligatures, superscripts …) are refused, so `Ｇｏｏｇｌｅ` is not shown where it reads as
 * "Google"; canonical variants (an accent sent as a combining mark) are not compatibility ones. A
 * word that mixes Latin, Greek and Cyrillic letters (`Gооgle` with Cyrillic `о`) is refused too.
 */
export function clientNameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string' || !name.trim() || name.length > MAX_CLIENT_NAME || UNSHOWABLE.test(name)) {
    return `client_name must be 1-${MAX_CLIENT_NAME} characters without control characters`;
  }
  const plain = name.normalize('NFKC');
  if (plain !== name.normalize('NFC')) {
    return `client_name must not use full-width, styled or other compatibility characters (Unicode NFKC changes them); send ${JSON.stringify(plain)}`;
  }
  for (const word of name.split(/[^\p{L}\p{M}\p{N}]+/u)) {
    const scripts = LOOKALIKE_SCRIPTS.filter(([, letter]) => letter.test(word)).map(([script]) => script);
    if (scripts.length > 1) {
      // The word is not quoted: the error page would show the look-alike it refuses.
      return `client_name must not mix ${scripts.join(' and ')} letters in one word: their look-alike letters make it read as another name`;
    }
  }
  return undefined;
}

function assertShowableName(name: unknown): void {
  const problem = name === undefined ? undefined : clientNameProblem(name);
  if (problem) throw new errors.InvalidClientMetadata(problem);
}

/** oidc-provider's InvalidRedirectUri ignores a message and says "did not match", which is the authorize step's wording. */
function withDescription<E extends Error>(error: E, description: string): E {
  return Object.assign(error, { error_description: description });
}

/** Whether `value` is nested deeper than `max` levels; iterative, to survive what a recursive walk would not. */
function nestedDeeperThan(value: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length) {
    const [item, depth] = stack.pop()!;
    if (!item || typeof item !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(item)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The answer registrationGuard gives a declared Content-Length over the cap (RFC 7591 leaves it to us). */
function tooLarge(): Error {
  const error = new errors.CustomOIDCProviderError('payload_too_large', `client metadata must be at most ${MAX_METADATA_BYTES} bytes`);
  return Object.assign(error, { status: 413, statusCode: 413 });
}

export function clientKindOf(clientId: string): ClientKind {
  if (clientId.startsWith(REGISTERED_PREFIX)) return 'registered';
  if (/^https:\/\//i.test(clientId)) return 'metadata_document';
  return 'dynamic';
}

export function newClientId(prefix: string): string {
  return `${prefix}${randomBytes(16).toString('base64url')}`;
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);
/** Schemes that run script or read local data in the browser (checklist A4). */
const SCRIPT_SCHEMES = ['javascript', 'vbscript', 'livescript', 'data', 'file', 'blob', 'about', 'filesystem', 'jar', 'view-source', 'mhtml', 'wyciwyg'];
/**
 * Schemes that reach the network or start a handler of the system or the browser: after consent
 * the browser is sent there with the code, and the error page's "Return to …" opens one on a click
 * (`ms-msdt:` ran code on Windows, CVE-2022-30190). An app's own scheme is private-use (RFC 8252
 * §7.1: `com.example.app:/cb`, or a short one such as `cursor://`), never one of these.
 */
const HANDLER_SCHEMES = [
  'ftp', 'ftps', 'sftp', 'tftp', 'ssh', 'telnet', 'ws', 'wss', 'mailto', 'tel', 'sms', 'mms', 'callto', 'sip', 'sips', 'xmpp', 'im', 'news', 'nntp', 'snews',
  'ldap', 'ldaps', 'smb', 'cifs', 'nfs', 'afp', 'dav', 'webdav', 'gopher', 'irc', 'ircs', 'irc6', 'rtsp', 'rtmp', 'vnc', 'rdp', 'git', 'svn', 'magnet', 'ed2k', 'webcal',
  'chrome', 'chrome-extension', 'chrome-search', 'chrome-untrusted', 'devtools', 'edge', 'opera', 'brave', 'resource', 'moz-extension', 'safari-extension',
  'intent', 'android-app', 'content', 'market', 'itms', 'itms-apps', 'itms-services', 'prefs', 'app-prefs', 'x-apple-helpbook', 'shell', 'search', 'search-ms',
  'hcp', 'help', 'its', 'mk', 'res', 'cdl', 'notes', 'skype', 'msteams', 'steam', 'facetime', 'facetime-audio', 'zoommtg', 'geo',
];
const REFUSED_SCHEMES = new Set([...SCRIPT_SCHEMES, ...HANDLER_SCHEMES]);

/**
 * Why a redirect URI's scheme is refused, if it is. `scheme` is URL's (lower case, no colon). A
 * compound scheme (`svn+ssh`) is judged by each part; every `ms-` scheme is Microsoft's (`ms-msdt`,
 * `ms-officecmd`, `ms-settings` …), and a one-letter one reads as a Windows drive (`c:/…`).
 */
function schemeProblem(scheme: string): string | undefined {
  const refused = scheme.length === 1 || scheme.startsWith('ms-') || scheme.split('+').some((part) => REFUSED_SCHEMES.has(part));
  if (!refused) return undefined;
  return `redirect_uris must not use the ${scheme} scheme: use https, http on a loopback address, or a private-use scheme of the application's own (RFC 8252 §7.1, e.g. com.example.app:/callback)`;
}

export type RedirectUriClass = 'https' | 'loopback' | 'custom';

/**
 * Classifies a redirect URI or explains why it is refused (checklist A1-A4): no control characters
 * or backslashes (they would be normalised away by URL parsing and compare differently later), no
 * fragment or credentials, http only on loopback, no scheme that runs script or reaches a network
 * or a system handler (`schemeProblem`).
 */
export function classifyRedirectUri(uri: unknown): RedirectUriClass | { problem: string } {
  if (typeof uri !== 'string' || uri.length > 2000) return { problem: 'redirect_uris must be strings of at most 2000 characters' };
  if (!uri.length) return { problem: 'redirect_uris must not be empty' };
  for (let i = 0; i < uri.length; i++) {
    const code = uri.charCodeAt(i);
    if (code <= 0x20 || code === 0x7f || code === 0x5c) return { problem: 'redirect_uris must not contain spaces, control characters or backslashes' };
  }
  const url = URL.parse(uri);
  if (!url) return { problem: `redirect URI ${uri} is not a valid URI` };
  if (uri.includes('#')) return { problem: 'redirect_uris must not contain fragments' };
  if (url.username || url.password) return { problem: 'redirect_uris must not contain credentials' };
  const refusedScheme = schemeProblem(url.protocol.slice(0, -1));
  if (refusedScheme) return { problem: refusedScheme };
  if (url.protocol === 'https:') return LOOPBACK_HOSTS.has(url.hostname) ? { problem: 'loopback redirect URIs use http' } : 'https';
  if (url.protocol === 'http:') {
    return LOOPBACK_HOSTS.has(url.hostname) ? 'loopback' : { problem: 'http redirect URIs are only allowed for loopback addresses (127.0.0.1, [::1], localhost); use https' };
  }
  return 'custom';
}

/**
 * The synthetic metadata property whose validator normalises every client before schema
 * validation (notes §1.6; it runs for registration, metadata documents and stored clients):
 * loopback or custom-scheme redirect URIs make the client `native`, which is what lets
 * oidc-provider accept any loopback port (RFC 8252 §7.3) and custom schemes.
 */
const NORMALISER = 'x_portico_normalised';

/** `knownScopes`: the server's scopes; given, a self-registered or metadata-document client's `scope` is checked against them and dropped. */
export function extraClientMetadata(knownScopes?: readonly string[]): NonNullable<Configuration['extraClientMetadata']> {
  return {
    properties: [NORMALISER],
    validator(ctx: KoaContextWithOIDC | undefined, key: string, _value: unknown, metadata: Record<string, unknown>) {
      if (key !== NORMALISER) return;
      metadata[NORMALISER] = undefined;
      const uris = metadata.redirect_uris;
      if (uris !== undefined && !Array.isArray(uris)) throw new errors.InvalidClientMetadata('redirect_uris must be an array');
      const list = (uris ?? []) as unknown[];
      if (list.length > MAX_REDIRECT_URIS) throw new errors.InvalidClientMetadata(`at most ${MAX_REDIRECT_URIS} redirect_uris are accepted`);
      const classes = list.map((uri) => {
        const result = classifyRedirectUri(uri);
        if (typeof result !== 'string') throw withDescription(new errors.InvalidRedirectUri(), result.problem);
        return result;
      });
      if (classes.some((c) => c !== 'https')) metadata.application_type = 'native';
      if (typeof metadata.client_id === 'string' && clientKindOf(metadata.client_id) === 'metadata_document') {
        // A metadata document's name is shown as a self-registered client's is (checklist G6).
        assertShowableName(metadata.client_name);
        // Its client is public: oidc-provider refuses the shared-secret methods for it, and Portico
        // has no private_key_jwt, so its own refusal would offer the two shared-secret ones instead.
        const method = metadata.token_endpoint_auth_method;
        if (method !== undefined && method !== 'none') {
          throw new errors.InvalidClientMetadata("token_endpoint_auth_method must be 'none' for a client ID metadata document (PKCE proves the client; private_key_jwt is not supported)");
        }
      }
      // A self-registered client's or a metadata document's `scope` limits nothing anyone vetted (the
      // person's consent does, every time), but oidc-provider would refuse every other scope with
      // invalid_scope: MCP clients keep one registration per authorization server and register with
      // the scopes of the first product they met, so their next product could never be connected.
      // RFC 7591 §3.2.1 lets the server replace requested values; an operator's client keeps its own.
      if (knownScopes && typeof metadata.client_id === 'string' && clientKindOf(metadata.client_id) !== 'registered' && metadata.scope !== undefined) {
        if (typeof metadata.scope !== 'string' || metadata.scope.split(' ').some((scope) => !knownScopes.includes(scope))) {
          throw new errors.InvalidClientMetadata('scope must only contain Authorization Server supported scope values');
        }
        delete metadata.scope;
      }

      if (ctx?.oidc?.route === 'registration') {
        // The request as sent, unknown properties included: a body streamed without Content-Length
        // passes registrationGuard's check of the declared length (auth/index.ts).
        if (nestedDeeperThan(ctx.oidc.body, MAX_METADATA_DEPTH)) throw new errors.InvalidRequest(`client metadata must not be nested deeper than ${MAX_METADATA_DEPTH} levels`);
        if (Buffer.byteLength(JSON.stringify(ctx.oidc.body ?? {})) > MAX_METADATA_BYTES) throw tooLarge();
        if (Buffer.byteLength(JSON.stringify(metadata)) > MAX_METADATA_BYTES) {
          throw new errors.InvalidClientMetadata(`client metadata must be at most ${MAX_METADATA_BYTES} bytes`);
        }
        assertShowableName(metadata.client_name);
        // Dynamic registration is for public clients only (RFC 7591 §3.2.1 lets the server replace
        // requested values): no shared secret is ever issued to a client nobody vetted.
        metadata.token_endpoint_auth_method = 'none';
        delete metadata.client_secret;
        delete metadata.client_secret_expires_at;
      }
    },
  };
}

/** What the provider needs to know about clients, shared with the admin CLI's validation. */
export const CLIENT_DEFAULTS: NonNullable<Configuration['clientDefaults']> = {
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  id_token_signed_response_alg: 'RS256',
};

/** The redirect host shown on the consent page (for custom schemes, the scheme itself). */
export function redirectHostOf(uri: string): string {
  const url = URL.parse(uri);
  if (!url) return uri;
  if (url.protocol === 'http:' || url.protocol === 'https:') return url.host;
  return `${url.protocol}//${url.host}`;
}
