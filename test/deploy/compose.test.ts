import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parse } from 'yaml'
import { API_ROLE_SCRIPT } from '../../src/db/api-role.js'

// Least privilege in docker-compose.yml, from the files (CI also runs the stack: deploy/stack-test): the API and
// its replica reads connect as the role of prisma/sql/api-role.sql, which the migrate step
// makes with a password Compose requires; only migrate connects as POSTGRES_USER, which the
// postgres image makes a superuser. (test/build/production-build.test.ts runs the migrate
// command against a server; test/deploy/api-role.test.ts logs in with the password.)

const root = join(import.meta.dirname, '../..')
interface Service { command?: string[], environment?: Record<string, string> }
const compose = parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> }
const { postgres, migrate, api } = compose.services
const env = (service: Service | undefined): Record<string, string> => service?.environment ?? {}

/** The user of a connection URL whose password is a `${...}` placeholder. */
const userOf = (url: string): string | undefined => /^postgres(?:ql)?:\/\/([^:@/]+)[:@]/.exec(url)?.[1]
const passwordOf = (url: string): string | undefined => /^postgres(?:ql)?:\/\/[^:@/]+:(\$\{[^}]+\})@/.exec(url)?.[1]

const superuser = env(postgres).POSTGRES_USER!
const apiRole = env(migrate).API_DB_ROLE!

t.test('the API and its replica reads connect as the API role, not as POSTGRES_USER', async t => {
  t.ok(superuser, `POSTGRES_USER is ${superuser}`)
  t.ok(apiRole, `migrate makes the API role ${apiRole}`)
  t.not(apiRole, superuser)
  const urls = [env(api).DATABASE_URL!, ...env(api).DATABASE_REPLICA_URLS!.split(',')]
  t.equal(urls.length, 2, 'the primary and one replica')
  for (const url of urls) {
    t.equal(userOf(url), apiRole, `${url.replace(/\$\{[^}]+\}/, '…')}: as ${apiRole}`)
    t.match(passwordOf(url), /^\$\{API_DB_PASSWORD:\?/, 'with the required API_DB_PASSWORD')
  }
  for (const [name, value] of Object.entries(env(api))) t.notMatch(value, /POSTGRES_PASSWORD/, `the API's ${name} does not carry the owner's password`)
})

t.test('migrate runs the migrations as the owner, then makes the API role from prisma/sql/api-role.sql', async t => {
  t.same(migrate?.command, ['node', 'dist/migrate.js'])
  t.equal(userOf(env(migrate).DATABASE_URL!), superuser, 'as the owner')
  t.match(env(migrate).API_DB_PASSWORD, /^\$\{API_DB_PASSWORD:\?/, 'Compose refuses to start without API_DB_PASSWORD')
  t.equal(fileURLToPath(API_ROLE_SCRIPT), join(root, 'prisma/sql/api-role.sql'), 'the role comes from prisma/sql/api-role.sql')
  t.match(readFileSync(join(root, 'src/migrate.ts'), 'utf8'), /applyApiRole\(config\.DATABASE_URL, role, password\)/, 'which src/migrate.ts applies when API_DB_PASSWORD is set')
  const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8')
  t.match(dockerfile, /^COPY --from=build \/app\/prisma\/sql \.\/prisma\/sql$/m, 'the image holds the script')
})

t.test('the role the script makes is not a superuser, and gets no right to make roles or databases', async t => {
  const script = readFileSync(API_ROLE_SCRIPT, 'utf8').split('\n').filter(line => !line.trim().startsWith('--')).join('\n')
  t.match(script, /CREATE ROLE %I LOGIN'/, 'CREATE ROLE … LOGIN, nothing more (PostgreSQL\'s default: NOSUPERUSER)')
  t.notMatch(script, /\b(SUPERUSER|CREATEROLE|CREATEDB|BYPASSRLS|REPLICATION)\b/i)
  t.notMatch(script, /GRANT (ALL|INSERT|DELETE|TRUNCATE)/i, 'reads, and the one column update')
})

t.test('the example environment names the new secret, empty', async t => {
  t.match(readFileSync(join(root, 'deploy/compose.env.example'), 'utf8'), /^API_DB_PASSWORD=$/m)
  t.match(readFileSync(join(root, '.ci/run'), 'utf8'), /API_DB_PASSWORD=/, 'and CI checks Compose refuses to start without it')
})

t.test('the API instances get WEBHOOK_SECRET_KEY from a required variable, named in the example and in CI', async t => {
  // Without it on a server database, webhook endpoints answer 503; a default key would be a
  // key everyone knows.
  t.match(env(api).WEBHOOK_SECRET_KEY, /^\$\{WEBHOOK_SECRET_KEY:\?/, 'Compose refuses to start without WEBHOOK_SECRET_KEY')
  t.notOk(env(migrate).WEBHOOK_SECRET_KEY, 'migrate has no use for it')
  t.match(readFileSync(join(root, 'deploy/compose.env.example'), 'utf8'), /^WEBHOOK_SECRET_KEY=$/m)
  t.match(readFileSync(join(root, '.ci/run'), 'utf8'), /^secrets=".*\bWEBHOOK_SECRET_KEY=[A-Za-z0-9+/]{43}=[ "]/m, 'CI checks Compose refuses to start without it (with a key of the right form)')
})

t.test('the image, npm run start:prod and the bench run the service with the same V8 settings', async t => {
  const { PRODUCTION_NODE_FLAGS } = await import('../../bench/servers.js')
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'Dockerfile'), 'utf8').split('\n').filter(line => line.startsWith('CMD ')).at(-1) ?? '')
  t.same(JSON.parse(cmd![1]!), ['node', ...PRODUCTION_NODE_FLAGS, 'dist/server.js'], 'the Dockerfile\'s CMD')
  const scripts = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  t.equal(scripts['start:prod'], ['node', ...PRODUCTION_NODE_FLAGS, 'dist/server.js'].join(' '), 'npm run start:prod')
  t.equal(api?.command, undefined, 'Compose runs the image\'s command')
})
