import { psqlCommand } from '../db/data-dir-claim.js'
import type { DemoData } from './seed.js'

// A restricted key says so after the key, so that it is not taken for its plan's main key.
const restriction = (c: DemoData['credentials'][number]): string =>
  c.scopes === undefined ? '' : `  ${c.scopes.join(', ')} only: analytics answer 403 insufficient_scope`

/** How webhooks can be tried here: a local receiver needs an allowed loopback network. */
function webhookLines (allowedNetworks: string): string[] {
  const loopback = allowedNetworks.split(',').some(cidr => cidr.startsWith('127.') || cidr === '::1/128')
  return loopback
    ? ['  Webhooks:  npm run demo -- receive   (a local receiver; WEBHOOK_ALLOWED_NETWORKS allows 127.0.0.0/8 here),', '             then npm run demo -- complete-screen, and see the signed event arrive']
    : ['  Webhooks:  endpoints must be https at a public address; to try a local receiver, start with', '             WEBHOOK_ALLOWED_NETWORKS=127.0.0.0/8 npm start, then npm run demo -- receive']
}

/**
 * What a newcomer needs after `npm start` on the embedded database (in `dataDir`, served on
 * its socket): where the API is, the demo keys, and how to see a webhook fire.
 */
export function banner (baseUrl: string, demo: DemoData, dataDir?: string, webhookNetworks = ''): string {
  const pro = demo.credentials.find(c => c.plan === 'pro' && c.scopes === undefined) ?? demo.credentials[0]
  return [
    '',
    '  Screening Read API on the embedded database',
    `  Base URL:  ${baseUrl}`,
    `  API docs:  ${baseUrl}/docs`,
    ...(dataDir !== undefined ? [`  Database:  ${psqlCommand(dataDir)}  (npm run admin works beside it too)`] : []),
    ...webhookLines(webhookNetworks),
    '',
    '  Demo API keys:',
    ...demo.credentials.map(c => `    ${c.plan.padEnd(4)}  ${c.organization.padEnd(16)}  ${c.key}${restriction(c)}`),
    '',
    '  Try it:',
    `    curl -H "Authorization: Bearer ${pro?.key ?? ''}" ${baseUrl}/api/jobs/${demo.sampleJobId}`,
    '',
  ].join('\n')
}
