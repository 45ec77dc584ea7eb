import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { parse } from 'yaml'

// What the image and the compose file say runs (test/build/production-build.test.ts runs it
// outside Docker): the Dockerfile's runtime stage and docker-compose.yml's services.

const root = join(import.meta.dirname, '../..')

// The Dockerfile's last stage, continuation lines joined.
const dockerfile = (await readFile(join(root, 'Dockerfile'), 'utf8')).replace(/\\\n/g, ' ')
const runtimeStage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '))
export const instructions = (name: string): string[] => [...runtimeStage.matchAll(new RegExp(`^${name} +(.*)$`, 'gm'))].map(m => m[1]!.trim())
const jsonArray = (text: string | undefined): string[] => (text?.startsWith('[') === true ? JSON.parse(text) as string[] : [])
export const imageCommand = jsonArray(instructions('CMD')[0])
export const imageEntrypoint = jsonArray(instructions('ENTRYPOINT')[0])
export const healthCommand = jsonArray(/ CMD (\[.*\])$/.exec(instructions('HEALTHCHECK')[0] ?? '')?.[1])
export const imageEnv = Object.fromEntries(instructions('ENV').flatMap(line => line.split(/\s+/)).map(pair => pair.split('=') as [string, string]))
// `COPY --from=build /app/<path> ./<path>`: what the image holds.
export const imageFiles = instructions('COPY').map(args => /^--from=build \/app\/(\S+) \.\/(\S*)$/.exec(args)).map(m => (m !== null && (m[2] === '' || m[2] === m[1]) ? m[1]! : `unexpected: ${m?.[0]}`))

export interface ComposeService { command?: string[], entrypoint?: string[], build?: string, image?: string, environment?: Record<string, string>, deploy?: { replicas?: number } }
export const compose = parse(await readFile(join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, ComposeService> }
export const migrateCommand = compose.services.migrate?.command ?? []
