# syntax=docker/dockerfile:1
# Keyward's production image: compiled JavaScript on Node.js 24, run as the unprivileged `node`
# user, with nothing writable but /tmp (run it with a read-only root filesystem). It expects
# PostgreSQL and Redis (DATABASE_URL, REDIS_URL): see compose.yaml and docs/operations.md.

# 1. Dependencies, from the lock file only (cached until it changes).
FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund

# 2. Build: the server to dist/src, the CLI to dist/cli, the web app to dist/web; then drop the
#    development dependencies (the web app's libraries among them: its build is static files).
FROM deps AS build
COPY tsconfig.json tsconfig.build.json ./
COPY schema ./schema
COPY rest-shim ./rest-shim
COPY src ./src
COPY emails ./emails
COPY web ./web
COPY schema.graphql ./schema.graphql
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# 3. Runtime: only what the compiled server reads.
FROM node:24-bookworm-slim AS runtime
# Two malloc arenas: argon2id's 19 MiB blocks, freed in the hashing threads' own arenas, stayed
# resident (about 70 MB more after 1,500 sign-ins; npm run bench:memory). A fixed mmap threshold:
# glibc otherwise raises it to the largest block freed (up to 32 MiB), after which argon2id's
# blocks and PGlite's start-up buffers are carved from the heap and stay resident once freed
# (110 MB more at start, docs/benchmarks.md); fixed at its default, they are returned on free.
ENV NODE_ENV=production PORT=8080 HOST=0.0.0.0 MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/schema/migrations ./schema/migrations
COPY --from=build /app/emails ./emails
COPY --from=build /app/src/pages/assets ./src/pages/assets
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/api/ready').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# A 16 MB young generation: V8 sizes it from the machine's memory (128 MB on 24 GB), resident for nothing.
CMD ["node", "--max-semi-space-size=16", "--heap-growing-percent=30", "dist/src/main.js"]
