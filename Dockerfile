# authgate: multi-stage image. Build: docker build -t authgate:0.1.0 .
# The runtime image holds production dependencies, dist/ and config/ only, runs as uid 10001
# and starts node under tini, so SIGTERM reaches node and the gateway drains before exiting.

# Both stages use the same Node.js LTS base (22, Debian bookworm, glibc: @node-rs/argon2 ships a
# prebuilt linux-x64-gnu / linux-arm64-gnu binary for it).

# ---- build: compile TypeScript to dist/ ----
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# config/ is optional in the source tree; the runtime stage copies it either way.
RUN npm run build && mkdir -p config

# ---- runtime ----
FROM node:22-bookworm-slim AS runtime
LABEL org.opencontainers.image.title="authgate" \
      org.opencontainers.image.description="Authentication gateway" \
      org.opencontainers.image.licenses="Apache-2.0"

RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 authgate \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin authgate

ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund \
    && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY --from=build /app/config ./config

# The files stay root-owned and read-only to the gateway; it writes only to /tmp.
USER 10001:10001
EXPOSE 8080 9090
# For plain Docker; Kubernetes ignores it and uses the chart's probes.
HEALTHCHECK --interval=30s --timeout=3s --retries=3 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.AUTHGATE_OPS_PORT || 9090) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
