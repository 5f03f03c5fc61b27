/**
 * DEMO_PASSWORD is every demo account's password, so it follows the password rule (8-1024
 * characters, db/accounts.ts): one over 1024 characters is refused at start, naming the variable
 * (exit 2), not after migrating and listening, when the demo is seeded ("start failed: password
 * must be at most 1024 characters", exit 1).
 */
import test from 'ava';
import { ConfigError, loadConfig } from '../../../shared/config.js';

test('a DEMO_PASSWORD longer than a password may be is refused, naming the variable', (t) => {
  const error = t.throws(() => loadConfig({ DEMO_PASSWORD: 'p'.repeat(1025) }), { instanceOf: ConfigError });
  t.is(error?.variable, 'DEMO_PASSWORD');
  t.is(loadConfig({ DEMO_PASSWORD: 'p'.repeat(1024) }).demoPassword, 'p'.repeat(1024));
});
