import { spawnSync } from 'node:child_process'
import t from 'tap'
import { checkServingConfig, ConfigError, loadConfig } from '../../src/config.js'

t.test('defaults', async t => {
  t.match(loadConfig({}), { HOST: '127.0.0.1', PORT: 3000, DATA_DIR: './.data', UPGRADE_URL: '/dashboard/billing', DB_POOL_MAX: 10 })
  t.equal(loadConfig({}).DATABASE_URL, undefined, 'no database URL: embedded')
  t.equal(loadConfig({ PORT: '' }).PORT, 3000, 'an empty value means unset')
})

t.test('values are converted and checked', async t => {
  t.equal(loadConfig({ PORT: '8080' }).PORT, 8080)
  t.equal(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' }).DATABASE_URL, 'postgresql://u@h/db')
})

t.test('a bad value names the variable', async t => {
  const bad: Record<string, string> = {
    PORT: 'eighty', DB_POOL_MAX: '0', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', UPGRADE_URL: 'https://elsewhere', DB_QUERY_TIMEOUT_MS: '1.5', PUBLIC_URL: 'ftp://x',
  }
  for (const [name, value] of Object.entries(bad)) {
    let error: unknown
    try { loadConfig({ [name]: value }) } catch (e) { error = e }
    t.ok(error instanceof ConfigError, `${name}: ConfigError`)
    t.match((error as Error).message, `${name}=${JSON.stringify(value)}`, `${name}: named with its value`)
  }
})

t.test('the server refuses to start on a bad value, with a non-zero exit and the message', async t => {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...process.env, PORT: 'eighty', DATA_DIR: '/nonexistent' }, encoding: 'utf8', timeout: 60_000 })
  t.equal(res.status, 1)
  t.match(res.stderr, /PORT="eighty"/)
})

t.test('serving on a PostgreSQL server needs a shared cursor secret', async t => {
  const secret = 'x'.repeat(32)
  t.throws(() => { checkServingConfig(loadConfig({ DATABASE_URL: 'postgresql://u@h/db' })) }, { message: /CURSOR_SECRET is required when DATABASE_URL is set/ })
  t.doesNotThrow(() => { checkServingConfig(loadConfig({ DATABASE_URL: 'postgresql://u@h/db', CURSOR_SECRET: secret })) })
  t.doesNotThrow(() => { checkServingConfig(loadConfig({})) }, 'the embedded database: one process, a random secret is fine')
  t.throws(() => { checkServingConfig(loadConfig({ DATABASE_REPLICA_URLS: 'postgresql://u@r/db' })) }, { message: /DATABASE_REPLICA_URLS needs DATABASE_URL/ })
  t.same(loadConfig({ DATABASE_REPLICA_URLS: 'postgresql://u@r1/db,postgres://u@r2:5433/db' }).DATABASE_REPLICA_URLS, 'postgresql://u@r1/db,postgres://u@r2:5433/db')
  t.throws(() => loadConfig({ DATABASE_REPLICA_URLS: 'postgresql://u@r1/db,,mysql://x' }), { message: /DATABASE_REPLICA_URLS=/ })
  t.throws(() => { checkServingConfig(loadConfig({ DATABASE_LISTEN_URL: 'postgresql://u@h/db', CURSOR_SECRET: secret })) }, { message: /DATABASE_LISTEN_URL needs DATABASE_URL/ })
  t.throws(() => loadConfig({ DATABASE_LISTEN_URL: 'mysql://u@h/db' }), { message: /DATABASE_LISTEN_URL=/ })
  t.doesNotThrow(() => { checkServingConfig(loadConfig({ DATABASE_URL: 'postgresql://u@pooler:6432/db', DATABASE_LISTEN_URL: 'postgresql://u@h/db', CURSOR_SECRET: secret })) })
})

t.test('the server refuses to start on a server database without CURSOR_SECRET, naming it', async t => {
  const { CURSOR_SECRET: _, ...env } = process.env
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'src/server.ts'], { env: { ...env, DATABASE_URL: 'postgresql://nobody@127.0.0.1:9/none' }, encoding: 'utf8', timeout: 60_000 })
  t.equal(res.status, 1)
  t.match(res.stderr, /CURSOR_SECRET is required when DATABASE_URL is set/)
})
