import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import pg from 'pg'

// The API's database role, made or brought up to date by the migrate step, from the same
// prisma/sql/api-role.sql an operator runs with psql. The image has no psql, so the two psql
// features that script uses are done here, and only those: `:'name'` variables, quoted as
// literals, and `\gexec` (run the query, then each value of its result as a statement). Any
// other psql command is refused, so an edit of the script that needs more fails loudly.

export const API_ROLE_SCRIPT = new URL('../../prisma/sql/api-role.sql', import.meta.url)

/** The statements of a psql script that uses `\gexec` only, with its variables filled in. */
export function gexecQueries (script: string, variables: Record<string, string>): string[] {
  const queries: string[] = []
  let current: string[] = []
  for (const line of script.split('\n')) {
    const trimmed = line.trim()
    if (trimmed.startsWith('--') || trimmed === '') continue
    const gexec = trimmed.endsWith('\\gexec')
    const body = gexec ? trimmed.slice(0, -'\\gexec'.length) : line
    if (body.includes('\\')) throw new Error(`api-role.sql: only \\gexec is supported, not: ${trimmed}`)
    current.push(body)
    if (gexec) { queries.push(current.join('\n')); current = [] }
  }
  if (current.length > 0) throw new Error('api-role.sql: a statement without \\gexec at the end')
  return queries.map(query => query.replace(/:'([A-Za-z_]+)'/g, (_, name: string) => {
    const value = variables[name]
    if (value === undefined) throw new Error(`api-role.sql: no value for :'${name}'`)
    return pg.Client.prototype.escapeLiteral(value)
  }))
}

/**
 * The SCRAM-SHA-256 verifier PostgreSQL stores for a password (RFC 5802/7677), so that the
 * password itself is never sent in a statement a server log could record. ASCII only, where
 * SASLprep changes nothing; the URLs it goes into want URL-safe characters anyway.
 */
export function scramVerifier (password: string, salt = randomBytes(16), iterations = 4096): string {
  if (!/^[\x21-\x7e]+$/.test(password)) throw new Error('the API role\'s password must be printable ASCII without spaces')
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256')
  const hmac = (key: Buffer, text: string): Buffer => createHmac('sha256', key).update(text).digest()
  const stored = createHash('sha256').update(hmac(salted, 'Client Key')).digest()
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${stored.toString('base64')}:${hmac(salted, 'Server Key').toString('base64')}`
}

/**
 * Creates the role or updates its grants, settings and password, in one transaction, as
 * the owner of the database `ownerUrl` names. Run after the migrations, on every deploy, so
 * that a table a migration adds is granted too.
 */
export async function applyApiRole (ownerUrl: string, role: string, password: string): Promise<void> {
  const queries = gexecQueries(await readFile(API_ROLE_SCRIPT, 'utf8'), { role })
  const verifier = scramVerifier(password)
  const client = new pg.Client({ connectionString: ownerUrl, application_name: 'screening-read-api:migrate' })
  await client.connect()
  try {
    await client.query('BEGIN')
    const owner = (await client.query<{ user: string }>('SELECT current_user AS user')).rows[0]!.user
    if (owner === role) throw new Error(`API_DB_ROLE is ${role}, the owner migrate connects as: the API must have a role of its own`)
    for (const query of queries) {
      const generated = await client.query<unknown[]>({ text: query, rowMode: 'array' })
      for (const row of generated.rows) for (const statement of row) if (typeof statement === 'string') await client.query(statement)
    }
    const { rows } = await client.query<{ sql: string }>('SELECT format(\'ALTER ROLE %I PASSWORD %L\', $1::text, $2::text) AS sql', [role, verifier])
    await client.query(rows[0]!.sql)
    // An existing role of that name could have been made a superuser by hand: then the API
    // would not run with least privilege, and changing that is an operator's decision.
    const { rows: [found] } = await client.query<{ rolsuper: boolean }>('SELECT rolsuper FROM pg_roles WHERE rolname = $1', [role])
    if (found?.rolsuper !== false) throw new Error(`the role ${role} is a superuser: the API must not run as one (ALTER ROLE ${role} NOSUPERUSER)`)
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
}
