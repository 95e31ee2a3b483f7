# authgate: multi-stage image. Build: docker build -t authgate:0.1.0 .
# The runtime image holds node, the production dependencies, dist/ and config/ only (no npm, npx
# or corepack), runs as uid 10001 and starts node under tini, so SIGTERM reaches node and the
# gateway drains before exiting.
#
# Both stages use the same Node.js 24 LTS base (Debian bookworm, glibc: @node-rs/argon2 ships a
# prebuilt linux-x64-gnu / linux-arm64-gnu binary for it), pinned to the release the tests run
# on: package.json's devDependency `node` is the same version (test/image/dockerfile.test.ts
# checks it). To pin the bytes as well, append the digest your registry reports for this tag
# (node:24.21.0-bookworm-slim@sha256:…): which digest to trust is the operator's choice.

# ---- build: compile TypeScript to dist/, then drop the dev dependencies ----
FROM node:24.21.0-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# config/ is optional in the source tree; the runtime stage copies it either way.
RUN npm run build \
    && npm prune --omit=dev --no-audit --no-fund \
    && mkdir -p config

# ---- runtime: no build tools, no package manager ----
FROM node:24.21.0-bookworm-slim AS runtime
LABEL org.opencontainers.image.title="authgate" \
      org.opencontainers.image.description="Authentication gateway" \
      org.opencontainers.image.licenses="Apache-2.0"

# tini pinned to bookworm's package version; npm, npx, corepack (and yarn, where the base has it)
# removed: the gateway never installs anything, and a package manager is attack surface.
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini=0.19.0-1+b3 \
    && rm -rf /var/lib/apt/lists/* \
    && rm -rf /usr/local/lib/node_modules/npm /usr/local/lib/node_modules/corepack /opt/yarn-* \
    && rm -f /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack /usr/local/bin/yarn /usr/local/bin/yarnpkg \
    && groupadd --system --gid 10001 authgate \
    && useradd --system --uid 10001 --gid 10001 --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin authgate

ENV NODE_ENV=production
WORKDIR /app
# package.json: "type": "module" for dist/, and the version the CLI prints.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
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
