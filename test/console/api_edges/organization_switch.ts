/**
 * A person in several organizations chooses one at sign-in (`/organization`), and can choose
 * another later from any page: the header links to the choice, which has the current one selected
 * and a way back. Someone in one organization has nothing to switch to, and no link.
 */
import test from 'ava';
import { databasesUnderTest } from '../../helpers/db.js';
import { unescapeHtml } from '../../helpers/oauth.js';
import { Session, signIn, startConsole } from '../setup.js';

const header = (text: string) => /<header>[\s\S]*<\/header>/.exec(text)?.[0] ?? '';
const selected = (text: string) => /<option value="([^"]+)" selected>/.exec(text)?.[1];

for (const kind of databasesUnderTest()) {
  test(`a person in several organizations switches from the header; someone in one has no such link [${kind}]`, async (t) => {
    const f = await startConsole(kind);
    t.teardown(() => f.close());
    const multi = await signIn(f, 'multi@example.com');
    const choice = await multi.request('/api/mcp/organization');
    t.is(choice.status, 200);
    t.is(selected(choice.text), undefined, 'nothing chosen yet, nothing selected');
    t.notRegex(choice.text, />Cancel</, 'no way back before a first choice');
    const chosen = await multi.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(choice.text), tenant: 'acme' } });
    t.is(chosen.location, '/api/mcp/connections');

    const connections = await multi.request('/api/mcp/connections');
    t.regex(header(connections.text), /Acme Corporation \(member\)/);
    const link = /<a href="([^"]+)">Switch organization<\/a>/.exec(header(connections.text))?.[1];
    t.is(link && unescapeHtml(link), '/api/mcp/organization', 'the header offers to switch');

    const again = await multi.request('/api/mcp/organization');
    t.is(selected(again.text), 'acme', 'the organization chosen now is selected');
    t.regex(again.text, /href="\/api\/mcp\/connections">Cancel</);
    const switched = await multi.request('/api/mcp/organization', { form: { csrf: Session.csrfOf(again.text), tenant: 'globex' } });
    t.is(switched.location, '/api/mcp/connections');
    t.regex(header((await multi.request('/api/mcp/connections')).text), /Globex Industries \(admin\)/);

    const ann = await signIn(f, 'ann@acme.example');
    t.notRegex(header((await ann.request('/api/mcp/connections')).text), /Switch organization/);
  });
}
