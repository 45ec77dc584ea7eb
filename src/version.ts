import { readFileSync } from 'node:fs'

/** The package version: the OpenAPI document's info.version. */
export const version: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
