# The API as production runs it: compiled JavaScript on a supported Node LTS, production
# dependencies only, as a non-root user. Migrations are not run here: the one-shot
# `migrate` service of docker-compose.yml (or your release step) runs `node dist/migrate.js`.
# Secrets (DATABASE_URL, CURSOR_SECRET, WEBHOOK_SECRET_KEY, METRICS_TOKEN; API_DB_PASSWORD for migrate) come
# from the environment at run time.

FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts/prisma-generate.mjs ./scripts/
# postinstall generates the Prisma client (WebAssembly engine, no download).
RUN npm ci --no-fund --no-audit
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY scripts/production-modules.mjs ./scripts/
# The runtime's node_modules: only the files dist/ loads (traced by @vercel/nft), not every
# production package whole (npm prune --omit=dev kept the Prisma CLI, Studio and their
# dependencies: 365 MB).
RUN npm run build && node scripts/production-modules.mjs /tmp/production \
 && rm -rf node_modules && mv /tmp/production/node_modules ./node_modules

FROM node:24-slim
# tini as PID 1: it forwards SIGTERM to node (which drains and closes, close-with-grace) and
# reaps zombies. Node as PID 1 would ignore every signal it has no handler for (the kernel
# gives PID 1 no default actions) and reap nothing. So `docker run --init` is not needed.
RUN apt-get update && apt-get install -y --no-install-recommends tini && rm -rf /var/lib/apt/lists/*
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
# Owned by root, read-only to the `node` user the process runs as: code and migrations
# cannot be altered by the app. (So the image runs against DATABASE_URL only: the embedded
# development database would have to write under /app/.data.)
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/prisma/migrations ./prisma/migrations
COPY --from=build /app/prisma/schema.prisma ./prisma/schema.prisma
# The API role's script: the migrate step runs it (dist/db/api-role.js; the image has no psql).
COPY --from=build /app/prisma/sql ./prisma/sql
COPY --from=build /app/dist ./dist
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health/ready').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# The V8 settings of bench/servers.ts (PRODUCTION_NODE_FLAGS; docs/performance.md, "Memory").
CMD ["node", "--max-semi-space-size=16", "--max-old-space-size=256", "dist/server.js"]
