import { Redis } from 'ioredis'

/** The Redis the tests use (a real one: `TEST_REDIS_URL`, or the local default). */
export const redisUrl = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379'

async function redisReachable (): Promise<boolean> {
  const redis = new Redis(redisUrl, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, enableOfflineQueue: false })
  try { await redis.connect(); await redis.ping(); return true } catch { return false } finally { redis.disconnect() }
}

/** tap's `skip` for tests that need Redis: never skipped in CI, where its absence is a failure. */
export const skipWithoutRedis: string | false = process.env.CI !== 'true' && !(await redisReachable()) ? `no Redis at ${redisUrl}` : false
