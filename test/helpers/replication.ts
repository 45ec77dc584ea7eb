import { execFile, execFileSync } from 'node:child_process'
import { appendFileSync, chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { freePort } from './ports.js'

// A primary and a streaming standby of our own, made with PostgreSQL's tools (initdb,
// pg_basebackup -R, pg_ctl) in a temporary directory on free ports: the machine's cluster is
// not touched. Run as the `postgres` user when the tests run as root (initdb refuses root).

const run = promisify(execFile)

/** Where the server tools are, or why they cannot be used here. */
export function replicationTools (): { bindir: string } | { missing: string } {
  let bindir: string
  try {
    bindir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
  } catch {
    return { missing: 'pg_config not found (PostgreSQL server tools are not installed)' }
  }
  for (const tool of ['initdb', 'pg_ctl', 'pg_basebackup']) {
    if (!existsSync(join(bindir, tool))) return { missing: `${tool} not in ${bindir}` }
  }
  if (process.getuid?.() === 0) {
    try { execFileSync('id', ['postgres'], { stdio: 'ignore' }) } catch { return { missing: 'running as root with no postgres user to run the server as' } }
  }
  return { bindir }
}

/** Runs one of the server tools (`initdb`, `pg_ctl`, …) with its arguments, in the workspace. */
type Tool = (name: string, args: string[]) => Promise<void>

/**
 * A temporary directory for clusters of our own and a runner of the server tools in it: as the
 * `postgres` user (which then owns the directory) when the tests run as root.
 */
function workspace (bindir: string, prefix: string): { dir: string, tool: Tool } {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  const asRoot = process.getuid?.() === 0
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })))
  const tool = async (name: string, args: string[]): Promise<void> => {
    const [cmd, cmdArgs] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bindir, name), ...args]] : [join(bindir, name), args]
    await run(cmd, cmdArgs, { cwd: dir, timeout: 60_000 })
  }
  return { dir, tool }
}

/** A cluster of our own: `initdb`, optionally its next transaction id set (`pg_resetwal -x`), started. */
export interface Cluster {
  url: (database: string) => string
  /** The server's log file. */
  log: string
  close: () => Promise<void>
}

/**
 * A fresh cluster, as after `initdb` on a new server; with `nextXid` (a multiple of 1,048,576,
 * the first transaction of a pg_xact segment, as pg_resetwal's documentation asks), its
 * transaction ids start there instead of a few hundred; with `settings`, lines added to its
 * postgresql.conf.
 */
export async function startCluster (bindir: string, { nextXid, settings = [] }: { nextXid?: bigint, settings?: string[] } = {}): Promise<Cluster> {
  const { dir, tool } = workspace(bindir, 'screening-cluster-')
  const data = join(dir, 'data')
  const port = await freePort()
  const close = async (): Promise<void> => {
    await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    await tool('initdb', ['-A', 'trust', '-U', 'postgres', '-D', data, '--no-sync'])
    if (nextXid !== undefined) await tool('pg_resetwal', ['-x', String(nextXid), '-D', data])
    appendFileSync(join(data, 'postgresql.conf'), [`port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`,
      'fsync = off', 'synchronous_commit = off', 'max_connections = 30', 'shared_buffers = 32MB', ...settings, ''].join('\n'))
    await tool('pg_ctl', ['-D', data, '-l', `${data}.log`, '-w', '-t', '30', 'start'])
  } catch (error) {
    await close()
    throw error
  }
  return { url: database => `postgresql://postgres@127.0.0.1:${port}/${database}`, log: `${data}.log`, close }
}

export interface ReplicatedPair {
  primaryUrl: (database: string) => string
  /** The first standby, or the `index`th with `standbys` > 1. */
  standbyUrl: (database: string, index?: number) => string
  stopStandby: () => Promise<void>
  startStandby: () => Promise<void>
  close: () => Promise<void>
}

/** A primary and `standbys` standbys of it (one by default), each streaming from the primary. */
export async function startReplicatedPair (bindir: string, { standbys = 1 }: { standbys?: number } = {}): Promise<ReplicatedPair> {
  const { dir, tool } = workspace(bindir, 'screening-replica-')
  const primaryDir = join(dir, 'primary')
  const standbyDirs = Array.from({ length: standbys }, (_, i) => join(dir, i === 0 ? 'standby' : `standby${i + 1}`))
  const standbyDir = standbyDirs[0]!
  const primaryPort = await freePort()
  const standbyPorts: number[] = []
  for (let i = 0; i < standbys; i++) standbyPorts.push(await freePort())
  const settings = (port: number): string => [
    `port = ${port}`, "listen_addresses = '127.0.0.1'", `unix_socket_directories = '${dir}'`,
    'max_wal_senders = 4', 'wal_keep_size = 64MB', 'fsync = off', 'synchronous_commit = off',
    'max_connections = 50', 'shared_buffers = 32MB', '',
  ].join('\n')
  const pgCtl = async (data: string, action: 'start' | 'stop'): Promise<void> => {
    await tool('pg_ctl', action === 'start' ? ['-D', data, '-l', `${data}.log`, '-w', '-t', '30', 'start'] : ['-D', data, '-m', 'fast', '-w', 'stop'])
  }
  const close = async (): Promise<void> => {
    for (const data of [...standbyDirs, primaryDir]) await tool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
    rmSync(dir, { recursive: true, force: true })
  }
  try {
    // initdb's pg_hba.conf already trusts replication connections from 127.0.0.1.
    await tool('initdb', ['-A', 'trust', '-U', 'postgres', '-D', primaryDir, '--no-sync'])
    appendFileSync(join(primaryDir, 'postgresql.conf'), settings(primaryPort))
    await pgCtl(primaryDir, 'start')
    for (const [i, data] of standbyDirs.entries()) {
      await tool('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '--no-sync'])
      appendFileSync(join(data, 'postgresql.auto.conf'), `port = ${standbyPorts[i]!}\n`)
      await pgCtl(data, 'start')
    }
  } catch (error) {
    await close()
    throw error
  }
  const url = (port: number) => (database: string): string => `postgresql://postgres@127.0.0.1:${port}/${database}`
  return {
    primaryUrl: url(primaryPort),
    standbyUrl: (database, index = 0) => url(standbyPorts[index]!)(database),
    stopStandby: async () => { await pgCtl(standbyDir, 'stop') },
    startStandby: async () => { await pgCtl(standbyDir, 'start') },
    close,
  }
}
