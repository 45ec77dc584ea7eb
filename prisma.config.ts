import { defineConfig } from 'prisma/config'

// Used by `prisma generate` and, for those who have Prisma's native engine, by
// `prisma migrate deploy`. Our own migration runner (src/db/migrate.ts) reads the same folder.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://localhost/unused' },
})
