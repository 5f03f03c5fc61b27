import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DEFAULT_REQUEST_TIMEOUT_MSEC } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ConfigError, loadConfig } from '../../shared/config.js';

test('defaults follow DESIGN.md §1', (t) => {
  const config = loadConfig({});
  t.is(config.port, 8080);
  t.is(config.authUrl, 'http://localhost:8080');
  t.is(config.mcpUrl, 'http://localhost:8080/mcp');
  t.is(config.apiUrl, 'http://localhost:8080/api');
  t.is(config.database.kind, 'sqlite');
  t.true(config.database.kind === 'sqlite' && config.database.filename.endsWith('/data/portico.sqlite'));
  t.true(config.demo);
  t.is(config.trustProxy, 0);
  t.is(config.logLevel, 'info');
});

test('public URLs and the database are configurable', (t) => {
  const config = loadConfig({
    PUBLIC_AUTH_URL: 'https://auth.example.com/',
    PUBLIC_MCP_URL: 'https://mcp.example.com',
    DATABASE_URL: 'postgres://portico@db:5432/portico',
    TRUST_PROXY: '1',
    DEMO: 'off',
  });
  t.is(config.authUrl, 'https://auth.example.com');
  t.is(config.mcpUrl, 'https://mcp.example.com');
  t.is(config.apiUrl, 'https://auth.example.com/api');
  t.deepEqual(config.database, { kind: 'postgres', url: 'postgres://portico@db:5432/portico', preparedStatements: true, readTimeoutMs: 15_000, idleInTransactionTimeoutMs: 60_000, lockTimeoutMs: 61_000 });
  t.is(config.trustProxy, 1);
  t.is(loadConfig({ TRUST_PROXY: '2' }).trustProxy, 2, 'two proxies in front');
  t.is(loadConfig({ TRUST_PROXY: 'on' }).trustProxy, 1);
  t.is(loadConfig({ TRUST_PROXY: 'false' }).trustProxy, 0);
  t.false(config.demo);
});

test('DATABASE_PREPARED_STATEMENTS=off turns PostgreSQL prepared statements off; a bad value is refused', (t) => {
  const url = 'postgres://portico@db:5432/portico';
  t.deepEqual(loadConfig({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'off' }).database, { kind: 'postgres', url, preparedStatements: false, readTimeoutMs: 15_000, idleInTransactionTimeoutMs: 60_000, lockTimeoutMs: 61_000 });
  const error = t.throws(() => loadConfig({ DATABASE_URL: url, DATABASE_PREPARED_STATEMENTS: 'sometimes' }), { instanceOf: ConfigError });
  t.regex(error.message, /DATABASE_PREPARED_STATEMENTS/);
});

test('DATABASE_READ_TIMEOUT_MS sets how long a PostgreSQL read-pipe statement may run; values out of range are refused', (t) => {
  const url = 'postgres://portico@db:5432/portico';
  t.like(loadConfig({ DATABASE_URL: url, DATABASE_READ_TIMEOUT_MS: '2500' }).database, { kind: 'postgres', readTimeoutMs: 2_500 });
  for (const value of ['50', '600001', 'soon', '1.5']) {
    const error = t.throws(() => loadConfig({ DATABASE_URL: url, DATABASE_READ_TIMEOUT_MS: value }), { instanceOf: ConfigError });
    t.regex(error.message, /DATABASE_READ_TIMEOUT_MS/);
  }
});

test('DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: 60 s, or longer than a long TOOL_TIMEOUT_MS; never as short as the tool time-out', (t) => {
  const url = 'postgres://portico@db:5432/portico';
  t.like(loadConfig({ DATABASE_URL: url, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '90000' }).database, { kind: 'postgres', idleInTransactionTimeoutMs: 90_000 });
  t.like(loadConfig({ DATABASE_URL: url, TOOL_TIMEOUT_MS: '200', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '1000' }).database, { kind: 'postgres', idleInTransactionTimeoutMs: 1_000 });
  // A writing tool's handler runs inside its transaction: the default outlasts the tool time-out.
  t.like(loadConfig({ DATABASE_URL: url, TOOL_TIMEOUT_MS: '120000' }).database, { kind: 'postgres', idleInTransactionTimeoutMs: 150_000 });
  for (const [value, toolTimeout] of [['50', '15000'], ['86400001', '15000'], ['soon', '15000'], ['15000', '15000'], ['10000', '15000']]) {
    const error = t.throws(() => loadConfig({ DATABASE_URL: url, TOOL_TIMEOUT_MS: toolTimeout, DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: value }), { instanceOf: ConfigError }, value);
    t.regex(error.message, /DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS/);
  }
  // On SQLite the setting does nothing, but a bad value is still refused (the test below).
  t.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:/tmp/x.sqlite', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '90000' }).database, { kind: 'sqlite', filename: '/tmp/x.sqlite' });
});

const bad: Array<[string, string]> = [
  ['PORT', 'eighty'],
  ['PORT', '70000'],
  ['PORT', '0'],
  ['HOST', 'not a host'],
  ['HOST', 'bad_name.example'],
  ['PUBLIC_AUTH_URL', 'not a url'],
  ['PUBLIC_AUTH_URL', 'https://portico.example/auth'],
  ['PUBLIC_MCP_URL', 'ftp://x'],
  ['PUBLIC_API_URL', 'https://x/?q=1'],
  ['DATABASE_URL', 'mysql://x'],
  ['DATABASE_URL', 'sqlite:'],
  ['TRUST_PROXY', 'maybe'],
  ['TRUST_PROXY', '11'],
  ['TRUST_PROXY', '-1'],
  ['DEMO', 'sometimes'],
  ['DEMO_PASSWORD', 'short'],
  ['LOG_LEVEL', 'loud'],
  ['RESOURCE_URI_SCHEME', 'Not A Scheme'],
];

for (const [variable, value] of bad) {
  test(`a bad ${variable} (${JSON.stringify(value)}) is refused, naming the variable`, (t) => {
    const error = t.throws(() => loadConfig({ [variable]: value }), { instanceOf: ConfigError });
    t.is(error?.variable, variable);
    t.true(error?.message.startsWith(`${variable}: `));
  });
}

test('PostgreSQL settings are checked on SQLite too, where they do nothing: a typo stops the process now, not after a move', (t) => {
  for (const [name, value] of [['DATABASE_PREPARED_STATEMENTS', 'maybe'], ['DATABASE_READ_TIMEOUT_MS', '50'], ['DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS', 'soon']] as const) {
    const error = t.throws(() => loadConfig({ [name]: value }), { instanceOf: ConfigError });
    t.regex(error.message, new RegExp(name));
  }
  const error = t.throws(() => loadConfig({ TOOL_TIMEOUT_MS: '90000', DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '60000' }), { instanceOf: ConfigError });
  t.regex(error.message, /must be longer than TOOL_TIMEOUT_MS/);
  t.deepEqual(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off', DATA_DIR: '/tmp/x' }).database, { kind: 'sqlite', filename: '/tmp/x/portico.sqlite' });
});

test('PORT 0 (any free port) is accepted with PUBLIC_AUTH_URL; HOST takes addresses and host names', (t) => {
  t.is(loadConfig({ PORT: '0', PUBLIC_AUTH_URL: 'https://portico.example' }).port, 0);
  for (const host of ['127.0.0.1', '::1', '0.0.0.0', 'localhost', 'portico-1.internal.example']) t.is(loadConfig({ HOST: host }).host, host);
  t.is(loadConfig({ PUBLIC_AUTH_URL: 'https://portico.example/', PUBLIC_MCP_URL: 'https://portico.example/tools/mcp' }).mcpUrl, 'https://portico.example/tools/mcp', 'the MCP and API URLs may have paths');
});

test('CONFIRMATION_TIMEOUT_MS: 50 s unless set, well under the MCP SDK client’s request time-out; values out of range are refused', (t) => {
  t.is(loadConfig({}).confirmationTimeoutMs, 50_000);
  // The SDK client counts its time-out from sending tools/call: Portico must answer `timeout` first.
  t.true(loadConfig({}).confirmationTimeoutMs + 5_000 <= DEFAULT_REQUEST_TIMEOUT_MSEC);
  t.is(loadConfig({ CONFIRMATION_TIMEOUT_MS: '300000' }).confirmationTimeoutMs, 300_000);
  for (const value of ['999', '3600001', 'a minute', '-5']) {
    const error = t.throws(() => loadConfig({ CONFIRMATION_TIMEOUT_MS: value }), { instanceOf: ConfigError }, value);
    t.regex(error.message, /^CONFIRMATION_TIMEOUT_MS: /);
  }
});

test('DATABASE_URL sqlite:// is followed by an absolute path; anything else there, read as a host, is refused saying what to write', (t) => {
  t.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:///tmp/x.sqlite' }).database, { kind: 'sqlite', filename: '/tmp/x.sqlite' });
  t.deepEqual(loadConfig({ DATABASE_URL: 'sqlite:./data/x.sqlite' }).database, { kind: 'sqlite', filename: path.resolve('data/x.sqlite') });
  // These were /data/portico.sqlite and /portico.sqlite: the file went to the root of the disk, not ./data.
  for (const [url, instead] of [['sqlite://./data/portico.sqlite', 'sqlite:./data/portico.sqlite'], ['sqlite://portico.sqlite', 'sqlite:portico.sqlite']]) {
    const error = t.throws(() => loadConfig({ DATABASE_URL: url }), { instanceOf: ConfigError });
    t.is(error?.variable, 'DATABASE_URL');
    t.true(error?.message.includes(instead), error?.message);
  }
});

test('DATA_DIR, and the directory of a SQLite file, must be directories: a file there or on the way is refused, naming the variable and the file', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'portico-config-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'data');
  fs.writeFileSync(file, '');

  const itself = t.throws(() => loadConfig({ DATA_DIR: file }), { instanceOf: ConfigError });
  t.is(itself?.message, `DATA_DIR: ${file} is a file, not a directory: DATA_DIR must name a directory (made if missing), where the embedded SQLite database is kept`);
  const below = t.throws(() => loadConfig({ DATA_DIR: path.join(file, 'portico') }), { instanceOf: ConfigError });
  t.is(below?.message, `DATA_DIR: ${path.join(file, 'portico')} cannot be a directory, as ${file} is a file: DATA_DIR must name a directory (made if missing), where the embedded SQLite database is kept`);
  // Checked as written even when PostgreSQL is used, as the PostgreSQL settings are on SQLite.
  t.is(t.throws(() => loadConfig({ DATA_DIR: file, DATABASE_URL: 'postgres://db.example/portico' }), { instanceOf: ConfigError })?.variable, 'DATA_DIR');
  const sqlite = t.throws(() => loadConfig({ DATABASE_URL: `sqlite:${path.join(file, 'portico.sqlite')}` }), { instanceOf: ConfigError });
  t.is(sqlite?.message, `DATABASE_URL: the SQLite file ${path.join(file, 'portico.sqlite')} cannot be made there, as ${file} is a file, not a directory`);

  // A directory not there yet is made at start.
  t.deepEqual(loadConfig({ DATA_DIR: path.join(dir, 'new', 'data') }).database, { kind: 'sqlite', filename: path.join(dir, 'new', 'data', 'portico.sqlite') });
});
