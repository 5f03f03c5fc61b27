/**
 * routedPath (auth/provider.ts) is what Portico's guards in front of oidc-provider compare: it must
 * name the endpoint for exactly the spellings oidc-provider's own router sends there. A review found
 * the guards compared the path as sent, so /oauth/register/ and /OAUTH/REGISTER registered clients
 * past the per-address limit. Checked against the provider's router itself, so an upgrade that
 * changes its matching fails here.
 */
import test from 'ava';
import { routedPath, ROUTES } from '../../../auth/provider.js';

/** Not part of oidc-provider's API: its router, as auth/provider.ts looks up its other internals. */
const PROVIDER_ROUTER = 'oidc-provider/lib/helpers/router.js';

interface ProviderRouter {
  get(name: string, path: string, ...middleware: unknown[]): ProviderRouter;
  match(method: string, path: string): { route: { path: string } } | undefined;
}

const DISCOVERY = ['/.well-known/oauth-authorization-server', '/.well-known/openid-configuration'];

/** Ways to write a path: the case of its letters, trailing and doubled slashes, encodings, and letters whose upper case is ASCII. */
function spellings(path: string): string[] {
  const mixed = [...path].map((c, i) => (i % 2 ? c.toUpperCase() : c)).join('');
  return [
    path, path.toUpperCase(), mixed, `${path}/`, `${path.toUpperCase()}/`, `${path}//`, `/${path}`, `${path}/x`, `${path}/x/`, `${path}/X/y`,
    path.replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`), path.replace('k', '\u212a'), path.replace('s', '\u017f'), path.replace('i', '\u0131'),
    `${path}%2f`, `${path} `, `${path}.`, path.slice(0, -1),
  ];
}

test('routedPath names the endpoint oidc-provider routes a path to, for every spelling of every endpoint', async (t) => {
  const { default: Router } = (await import(PROVIDER_ROUTER)) as { default: new () => ProviderRouter };
  const router = new Router();
  const endpoints = [...Object.values(ROUTES), ...DISCOVERY];
  for (const path of endpoints) router.get(path, path, () => undefined);
  // The provider's routes with a parameter: the registration's client read, the authorization's resume.
  const parameterised = [`${ROUTES.registration}/:clientId`, `${ROUTES.authorization}/:uid`];
  for (const path of parameterised) router.get(path, path, () => undefined);

  let checked = 0;
  for (const path of endpoints) {
    for (const spelling of spellings(path)) {
      const routed = router.match('GET', spelling)?.route.path;
      const ours = routedPath(spelling);
      if (routed === undefined || parameterised.includes(routed)) {
        t.false(endpoints.includes(ours), `${JSON.stringify(spelling)}: oidc-provider routes it to ${routed ?? 'nothing'}, routedPath to ${ours}`);
      } else {
        t.is(ours, routed, JSON.stringify(spelling));
      }
      checked += 1;
    }
  }
  t.true(checked > 200);
  // The registration guard's CORS covers the client read under every spelling the provider routes.
  for (const spelling of ['/oauth/register/abc', '/OAUTH/REGISTER/abc', '/oauth/Register/abc/']) {
    t.is(router.match('GET', spelling)?.route.path, `${ROUTES.registration}/:clientId`, spelling);
    t.true(routedPath(spelling).startsWith(`${ROUTES.registration}/`), spelling);
  }
});
