# The API as production runs it: compiled JavaScript on a supported Node LTS, production
# dependencies only. Migrations run on start (idempotent).
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY scripts/prisma-generate.mjs ./scripts/
RUN npm ci --no-fund --no-audit
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-fund --no-audit

FROM node:24-slim
WORKDIR /app
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/prisma/migrations ./prisma/migrations
COPY --from=build /app/prisma/schema.prisma ./prisma/schema.prisma
COPY --from=build /app/dist ./dist
EXPOSE 3000
USER node
CMD ["sh", "-c", "node dist/migrate.js && exec node dist/server.js"]
