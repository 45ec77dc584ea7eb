# The API on Node 20, for docker-compose.yml. Migrations run on start (idempotent).
FROM node:20.20-slim
WORKDIR /app
COPY package.json package-lock.json ./
COPY prisma ./prisma
COPY prisma.config.ts ./
COPY scripts/prisma-generate.mjs ./scripts/
RUN npm ci --no-fund --no-audit
COPY . .
ENV HOST=0.0.0.0 PORT=3000
EXPOSE 3000
USER node
CMD ["sh", "-c", "npm run -s db:migrate && exec npx tsx src/server.ts"]
