import { chmod, mkdir, readFile, rename, rm, rmdir, stat, unlink, writeFile } from 'node:fs/promises'
import { connect, createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'

// One process owns an embedded data directory: the one listening on its Unix socket,
// <DATA_DIR>/.s.PGSQL.5432 (psql's name for it). The socket is the lock, and the door through
// which others reach the owner's database (door.ts): listening on it claims the directory; a
// socket that answers is a live owner; one that does not was left by a killed process.

export const SOCKET_NAME = '.s.PGSQL.5432'
const OWNER_FILE = 'owner.json'
// Claims are made one at a time (mkdir is atomic): a socket found dead is taken over by one
// process only. A lock left by a process killed while claiming (milliseconds) goes stale.
const CLAIM_LOCK = '.claim'
const STALE_LOCK_MS = 10_000
// sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs, the terminating NUL included.
const SOCKET_PATH_MAX = process.platform === 'linux' ? 107 : 103

/** Who owns a data directory, as its owner wrote it in owner.json. */
export interface DataDirOwner { pid: number, command: string, started_at: string }

export interface DataDirClaim { server: Server, release: () => Promise<void> }

export const socketPath = (dataDir: string): string => join(dataDir, SOCKET_NAME)

/** psql on the directory's database (PGlite has one database and one user, and takes any names). */
export const psqlCommand = (dataDir: string): string => `psql -h ${/^[\w./-]+$/.test(dataDir) ? dataDir : `'${dataDir.replaceAll("'", "'\\''")}'`} -U postgres postgres`

/** The directory's database for node-postgres, through the owner's socket. */
export const doorUrl = (dataDir: string): string => `postgresql://postgres@localhost/postgres?host=${encodeURIComponent(dataDir)}`

/** Refused: the directory is owned by a live process. */
export class DataDirInUse extends Error {
  constructor (readonly dataDir: string, readonly owner: DataDirOwner | undefined) {
    const who = owner !== undefined ? `process ${owner.pid} (${owner.command}, since ${owner.started_at})` : 'another process'
    const stop = owner !== undefined ? `Ctrl-C where it runs, or kill ${owner.pid}` : 'Ctrl-C where it runs'
    super(`DATA_DIR ${dataDir} is in use by ${who}: one process at a time owns an embedded database. Stop it first (${stop}), or set DATA_DIR to another directory. Beside it, \`npm run admin\` and \`${psqlCommand(dataDir)}\` use its database.`)
  }
}

/**
 * Claims `dataDir` (absolute; made if missing) for this process, taking over a socket left by a
 * killed one; `onConnection` gets every client of the socket. A live owner's details otherwise.
 */
export async function claimDataDir (dataDir: string, onConnection: (socket: Socket) => void): Promise<DataDirClaim | { owner: DataDirOwner | undefined }> {
  const path = socketPath(dataDir)
  if (Buffer.byteLength(path) > SOCKET_PATH_MAX) {
    throw new Error(`DATA_DIR ${dataDir} is too long a path for the embedded database's socket (${path}: ${Buffer.byteLength(path)} bytes, at most ${SOCKET_PATH_MAX} here): set DATA_DIR to a shorter path.`)
  }
  await mkdir(dataDir, { recursive: true })
  return await underClaimLock(dataDir, async () => {
    let server = await listenOn(path, onConnection)
    if (server === undefined) {
      if (await answers(path)) return { owner: await readOwner(dataDir) }
      await unlink(path)
      server = await listenOn(path, onConnection)
      if (server === undefined) throw new Error(`the embedded database's socket ${path} was made again while it was being taken over`)
    }
    // No password guards the socket: only this user may connect (its mode would follow the umask).
    await chmod(path, 0o600)
    const owner: DataDirOwner = { pid: process.pid, command: ['node', ...process.argv.slice(1)].join(' '), started_at: new Date().toISOString() }
    const file = join(dataDir, OWNER_FILE)
    await writeFile(`${file}.${process.pid}`, JSON.stringify(owner) + '\n')
    await rename(`${file}.${process.pid}`, file)
    const claimed = server
    return {
      server: claimed,
      // owner.json first: once the socket is gone, another owner may write its own.
      release: async () => {
        await unlink(file).catch(() => {})
        await new Promise<void>(resolve => { claimed.close(() => { resolve() }) })
      },
    }
  })
}

async function underClaimLock<T> (dataDir: string, claim: () => Promise<T>): Promise<T> {
  const lock = join(dataDir, CLAIM_LOCK)
  for (;;) {
    try {
      await mkdir(lock)
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    }
    const age = await stat(lock).then(s => Date.now() - s.mtimeMs, () => 0)
    if (age > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true })
    else await sleep(20)
  }
  try {
    return await claim()
  } finally {
    await rmdir(lock).catch(() => {})
  }
}

/** A server listening on `path`, or undefined when something is there already. */
async function listenOn (path: string, onConnection: (socket: Socket) => void): Promise<Server | undefined> {
  const server = createServer(onConnection)
  return await new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolve(undefined)
      else reject(new Error(`cannot make the embedded database's socket ${path} (${error.code}): DATA_DIR must be a directory this user may write, on a filesystem that has Unix sockets.`))
    })
    server.listen(path, () => {
      server.removeAllListeners('error')
      server.on('error', () => {}) // a failed accept is the client's affair
      resolve(server)
    })
  })
}

/** Whether a process listens on `path`: one that accepts, even if it then hangs, is alive. */
async function answers (path: string): Promise<boolean> {
  return await new Promise((resolve, reject) => {
    const socket = connect(path)
    socket.setTimeout(2000, () => { socket.destroy(); resolve(true) })
    socket.once('connect', () => { socket.destroy(); resolve(true) })
    socket.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED' || error.code === 'ENOENT') resolve(false)
      else if (error.code === 'EAGAIN') resolve(true) // its backlog is full: it listens
      else reject(error)
    })
  })
}

async function readOwner (dataDir: string): Promise<DataDirOwner | undefined> {
  try {
    return JSON.parse(await readFile(join(dataDir, OWNER_FILE), 'utf8')) as DataDirOwner
  } catch {
    return undefined
  }
}
