// After: the same task as all-analytics-before.ts, with the package's client.
import { createScreeningClient, ScreeningApiError } from '@screening/read-api'

const api = createScreeningClient({ baseUrl: process.env.SCREENING_API_URL!, apiKey: process.env.SCREENING_API_KEY!, etagCache: true })

for (let poll = 0; poll < 2; poll++) {
  let changed = 0
  let unchanged = 0
  for await (const job of api.listAllJobs({ limit: 100 })) {
    try {
      const { notModified } = await api.pollJobAnalytics(job.id)
      if (notModified) unchanged++
      else changed++
    } catch (error) {
      if (error instanceof ScreeningApiError && error.code === 'not_found') continue // deleted meanwhile
      throw error // upgrade_required included: the code says why
    }
  }
  console.log(`poll ${poll + 1}: ${changed} changed, ${unchanged} unchanged`)
}
