import type { DemoData } from './seed.js'

// A restricted key says so after the key, so that it is not taken for its plan's main key.
const restriction = (c: DemoData['credentials'][number]): string =>
  c.scopes === undefined ? '' : `  ${c.scopes.join(', ')} only: analytics answer 403 insufficient_scope`

/** What a newcomer needs after `npm start` on the embedded database. */
export function banner (baseUrl: string, demo: DemoData): string {
  const pro = demo.credentials.find(c => c.plan === 'pro' && c.scopes === undefined) ?? demo.credentials[0]
  return [
    '',
    '  Screening Read API on the embedded database',
    `  Base URL:  ${baseUrl}`,
    `  API docs:  ${baseUrl}/docs`,
    '',
    '  Demo API keys:',
    ...demo.credentials.map(c => `    ${c.plan.padEnd(4)}  ${c.organization.padEnd(16)}  ${c.key}${restriction(c)}`),
    '',
    '  Try it:',
    `    curl -H "Authorization: Bearer ${pro?.key ?? ''}" ${baseUrl}/api/jobs/${demo.sampleJobId}`,
    '',
  ].join('\n')
}
