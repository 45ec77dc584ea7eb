import { psqlCommand } from '../db/data-dir-claim.js'
import type { DemoData } from './seed.js'

// A restricted key says so after the key, so that it is not taken for its plan's main key.
const restriction = (c: DemoData['credentials'][number]): string =>
  c.scopes === undefined ? '' : `  ${c.scopes.join(', ')} only: analytics answer 403 insufficient_scope`

/** What a newcomer needs after `npm start` on the embedded database (in `dataDir`, served on its socket). */
export function banner (baseUrl: string, demo: DemoData, dataDir?: string): string {
  const pro = demo.credentials.find(c => c.plan === 'pro' && c.scopes === undefined) ?? demo.credentials[0]
  return [
    '',
    '  Screening Read API on the embedded database',
    `  Base URL:  ${baseUrl}`,
    `  API docs:  ${baseUrl}/docs`,
    ...(dataDir !== undefined ? [`  Database:  ${psqlCommand(dataDir)}  (npm run admin works beside it too)`] : []),
    '',
    '  Demo API keys:',
    ...demo.credentials.map(c => `    ${c.plan.padEnd(4)}  ${c.organization.padEnd(16)}  ${c.key}${restriction(c)}`),
    '',
    '  Try it:',
    `    curl -H "Authorization: Bearer ${pro?.key ?? ''}" ${baseUrl}/api/jobs/${demo.sampleJobId}`,
    '',
  ].join('\n')
}
