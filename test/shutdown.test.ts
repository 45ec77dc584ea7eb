import t from 'tap'
import { startServer } from './helpers/server-process.js'

// SIGTERM under load: requests in flight complete, requests after it get 503 (or are refused
// once the listener is closed), nothing is cut mid-response, and the process exits 0 in 10 s.
t.test('graceful shutdown under load', async t => {
  const server = await startServer(t)
  const url = `${server.baseUrl}/api/jobs/${server.sampleJobId}/analytics`
  const headers = { authorization: `Bearer ${server.keys.pro}` }
  const counts = { ok: 0, unavailable: 0, refused: 0, dropped: 0, other: 0 }
  let stop = false
  const reasons = new Set<string>()
  const worker = async (): Promise<void> => {
    for (let i = 0; i < 2000 && !stop; i++) {
      try {
        const res = await fetch(url, { headers })
        await res.text()
        if (res.status === 200) counts.ok++
        else if (res.status === 503) counts.unavailable++
        else counts.other++
      } catch (error) {
        const code = (error as { cause?: { code?: string } }).cause?.code
        if (code === 'ECONNREFUSED') { counts.refused++; stop = true } else { counts.dropped++; reasons.add(`${code ?? ''} ${(error as { cause?: { message?: string } }).cause?.message ?? String(error)}`) }
      }
    }
  }
  const workers = Array.from({ length: 20 }, worker)
  while (counts.ok < 200) await new Promise(resolve => setTimeout(resolve, 20))
  const signalled = Date.now()
  server.child.kill('SIGTERM')
  const exitCode = await new Promise<number | null>(resolve => server.child.once('exit', resolve))
  const exitedAfter = Date.now() - signalled
  stop = true
  await Promise.all(workers)
  t.comment(`shutdown: ${JSON.stringify(counts)}, exit ${exitCode} after ${exitedAfter} ms ${[...reasons].join('; ')}`)
  t.equal(exitCode, 0, 'exits cleanly')
  t.ok(exitedAfter < 10_000, `exits within 10 s (${exitedAfter} ms)`)
  t.equal(counts.dropped, 0, 'no request cut mid-flight')
  t.equal(counts.other, 0, 'only 200 and 503')
  t.ok(counts.ok >= 200)
})
