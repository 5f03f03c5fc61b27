/**
 * A client_name in compatibility characters (full-width or mathematical letters, circled letters,
 * ligatures: what Unicode NFKC replaces) reads as another name on the sign-in and consent pages:
 * `Ｇｏｏｇｌｅ` as "Google" (checklist G6). Such a name is refused at registration and in a client
 * ID metadata document alike, and so is a word mixing Latin, Greek and Cyrillic letters, which look
 * alike (`Gооgle` with Cyrillic `о`), while ordinary names in any script (accented Latin, Cyrillic,
 * Greek, CJK, Hangul, Arabic, Hebrew, Devanagari, Thai, emoji), words of different scripts side by
 * side included, are accepted and shown as sent.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { follow, startAuthorization } from '../../helpers/oauth.js';
import { startAuthServer } from '../support.js';

const LOOKALIKES = ['Ｇｏｏｇｌｅ', '𝐆𝐨𝐨𝐠𝐥𝐞', '𝔊𝔬𝔬𝔤𝔩𝔢', 'Ⓖⓞⓞⓖⓛⓔ', 'Micro\uFB01 Assistant', 'ｶｽﾀﾏｰ', 'Acme\u00A0Assistant'];

/** Cyrillic о, а, Ѕ, А and Greek ο, Α among Latin letters, and a Latin e in a Cyrillic word. */
const MIXED = ['G\u043E\u043Egle', 'P\u0430ypal Assistant', '\u0405lack', 'Claude for \u0410cme', 'G\u03BF\u03BFgle', '\u0391nthropic', '\u042F\u043D\u0434e\u043A\u0441'];

const ORDINARY = [
  'Claude Code', 'Café Assistant', 'Cafe\u0301 Assistant', 'Zürich Übersetzer', 'Łódź Żółć', 'Çağrı İstanbul', 'Straße', 'Ærø', 'Tiếng Việt',
  'Ελληνικά Εργαλεία', 'Русский помощник', 'Україна', '日本語アシスタント', '中文助手', '繁體中文', '한국어 도우미', 'العربية', 'עברית',
  'हिन्दी सहायक', 'ไทย', 'Claude 🤖', '❤️ Notes', '🇫🇷 Paris', 'O’Reilly — “Ünïcode”', 'N° 5',
  'Google Диск', 'Яндекс Maps', 'Ελληνικά Tools', 'Office 365', 'Mail.ru Почта', 'Ω-3 Tracker',
];

function register(url: string, name: string) {
  return fetch(`${url}/oauth/register`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: name, redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' }),
  });
}

const documentUrl = (i: number) => `https://client.example/oauth/${i}/metadata.json`;

for (const kind of databasesUnderTest()) {
  test(`registration refuses a client_name in full-width or styled letters or mixing look-alike scripts in a word, and accepts ordinary names in any script [${kind}]`, async (t) => {
    const server = await startAuthServer(kind, { auth: { registrationsPerMinute: 1000 } });
    try {
      for (const name of LOOKALIKES) {
        const response = await register(server.url, name);
        const body = (await response.json()) as { error?: string; error_description?: string };
        t.is(response.status, 400, JSON.stringify(name));
        t.is(body.error, 'invalid_client_metadata', JSON.stringify(name));
        t.regex(body.error_description ?? '', /compatibility characters .*; send "/, JSON.stringify(name));
      }
      for (const name of MIXED) {
        const response = await register(server.url, name);
        const body = (await response.json()) as { error?: string; error_description?: string };
        t.is(response.status, 400, JSON.stringify(name));
        t.is(body.error, 'invalid_client_metadata', JSON.stringify(name));
        t.regex(body.error_description ?? '', /must not mix (Latin|Greek|Cyrillic) and (Latin|Greek|Cyrillic) letters in one word/, JSON.stringify(name));
      }
      t.is(Number((await server.portico.context.db('oidc_payloads').where({ model: 'Client' }).count({ n: '*' }).first())?.n), 0, 'nothing was registered');
      for (const name of ORDINARY) {
        const response = await register(server.url, name);
        const body = (await response.json()) as { client_name?: string; error_description?: string };
        t.is(response.status, 201, `${name}: ${body.error_description}`);
        t.is(body.client_name, name);
      }
    } finally {
      await server.close();
    }
  });

  test(`a metadata document whose client_name is in full-width letters or mixes look-alike scripts is refused and not shown; an ordinary one is shown [${kind}]`, async (t) => {
    const names = ['Ｇｏｏｇｌｅ', '𝐆𝐨𝐨𝐠𝐥𝐞', 'G\u043E\u043Egle', 'Русский помощник'];
    const fetchDocument = async (input: string | URL | Request) => {
      const url = String(input instanceof Request ? input.url : input);
      const i = names.findIndex((_, n) => documentUrl(n) === url);
      if (i < 0) return new Response('not found', { status: 404 });
      return Response.json({ client_id: url, client_name: names[i], redirect_uris: ['http://127.0.0.1/callback'], token_endpoint_auth_method: 'none' });
    };
    const server = await startAuthServer(kind, { auth: { fetch: fetchDocument as typeof fetch } });
    try {
      for (const [i, name] of names.entries()) {
        const auth = await startAuthorization(server.url, { clientId: documentUrl(i), redirectUri: 'http://127.0.0.1:4000/callback', resource: server.forge, scopes: ['forge.chat.read'] });
        const html = (await follow(server.url, auth.jar, auth.response)).html ?? '';
        if (i < 3) {
          t.false(html.includes(name), `${name} is shown`);
          t.regex(html, /invalid_client_metadata/, `${name} was not refused`);
          t.notRegex(html, /name="password"/, `${name}: the sign-in form is offered`);
        } else {
          t.true(html.includes(name), `${name} is not shown`);
          t.regex(html, /name="password"/);
        }
      }
    } finally {
      await server.close();
    }
  });
}
