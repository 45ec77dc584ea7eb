// Child processes of the bench: each one is killed by the cleanup, whatever happens.
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { onCleanup } from './cleanup.js'

export interface Child {
  name: string
  process: ChildProcess
  /** Set when it exited on its own (a crash while it should be serving). */
  exited: string | undefined
  stop: () => Promise<void>
}

async function kill (proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  const exited = once(proc, 'exit')
  proc.kill('SIGTERM')
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5000)
  await exited
  clearTimeout(timer)
}

export function startChild (name: string, command: string, args: string[], options: SpawnOptions = {}): Child {
  const proc = spawn(command, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options })
  const child: Child = { name, process: proc, exited: undefined, stop: async () => {} }
  const unregister = onCleanup(`stop ${name}`, async () => { await kill(proc) })
  let stopping = false
  proc.once('exit', (code, signal) => { if (!stopping) child.exited = `${name} exited (code ${code}, signal ${signal})` })
  child.stop = async () => {
    stopping = true
    await kill(proc)
    unregister()
  }
  return child
}

/** Runs a command to its end (killed by the cleanup if the bench is interrupted first). */
export async function runToEnd (name: string, command: string, args: string[], options: SpawnOptions = {}): Promise<void> {
  const child = startChild(name, command, args, options)
  const [code, signal] = await once(child.process, 'exit') as [number | null, string | null]
  await child.stop()
  if (code !== 0) throw new Error(`${name} failed (code ${code}, signal ${signal})`)
}

/** A port free now, for a server started next (the kernel picks it). */
export async function freePort (): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const address = server.address()
  server.close()
  if (address === null || typeof address === 'string') throw new Error('no port')
  return address.port
}

/** Polls `url` until it answers 200; fails if the child exits or `timeoutMs` passes. */
export async function waitForOk (child: Child, url: string, timeoutMs = 30_000, headers: Record<string, string> = {}): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exited !== undefined) throw new Error(child.exited)
    const status = await fetch(url, { headers }).then(async r => { await r.arrayBuffer(); return r.status }, () => 0)
    if (status === 200) return
    if (Date.now() > deadline) throw new Error(`${child.name} not ready at ${url} after ${timeoutMs} ms (last status ${status})`)
    await new Promise(resolve => setTimeout(resolve, 100))
  }
}
