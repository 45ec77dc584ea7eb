import type { DemoData } from './db/seed.js'

/** What a newcomer needs after `npm start` on the embedded database. */
export function banner (baseUrl: string, demo: DemoData): string {
  const pro = demo.credentials.find(c => c.plan === 'pro') ?? demo.credentials[0]
  return [
    '',
    '  Screening Read API on the embedded database',
    `  Base URL:  ${baseUrl}`,
    `  API docs:  ${baseUrl}/docs`,
    '',
    '  Demo API keys:',
    ...demo.credentials.map(c => `    ${c.plan.padEnd(4)}  ${c.organization.padEnd(16)}  ${c.key}`),
    '',
    '  Try it:',
    `    curl -H "Authorization: Bearer ${pro?.key ?? ''}" ${baseUrl}/api/jobs/${demo.sampleJobId}`,
    '',
  ].join('\n')
}
