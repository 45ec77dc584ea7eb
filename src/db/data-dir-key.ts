import { randomBytes } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

// A secret the embedded database keeps beside its data (as DATA_DIR/webhook-secret.key is
// kept), so that what it signed before a restart is still its own after it.

/** `dataDir/name`'s key (base64 of 32 random bytes), made on first use, readable by its owner only. */
export async function dataDirKey (dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name)
  // `wx`: of two processes making it at once, one writes it and both read that one.
  await writeFile(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
  return (await readFile(file, 'utf8')).trim()
}
