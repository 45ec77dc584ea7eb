import { copyFile, link, lstat, mkdir, readdir } from 'node:fs/promises'
import { join } from 'node:path'

/** `cp -al` in this process: hard links, directories made (a process per traced path cost 12 s). */
export async function linkTree (from: string, to: string): Promise<void> {
  // A copy where a hard link cannot be made (the temporary directory on another file system).
  if (!(await lstat(from)).isDirectory()) return await link(from, to).catch(async (error: NodeJS.ErrnoException) => { if (error.code !== 'EXDEV') throw error; await copyFile(from, to) })
  await mkdir(to, { recursive: true })
  for (const entry of await readdir(from)) await linkTree(join(from, entry), join(to, entry))
}
