# Turnpike gateway image: README "Containers". Three stages: all dependencies + the dashboard's
# build; production dependencies only; then a slim runtime that runs as the unprivileged `bun` user.
ARG BUN_VERSION=1.4.4
# The base images pinned by digest (`@sha256:` + 64 hex digits), so that a rebuild of the same
# commit gets the same bytes even if the tag is moved. NOT YET FILLED IN: the machine these were
# written on could not reach Docker Hub. Look each up where it can, and paste them here:
#   docker buildx imagetools inspect oven/bun:1.4.4      --format '{{json .Manifest.Digest}}'
#   docker buildx imagetools inspect oven/bun:1.4.4-slim --format '{{json .Manifest.Digest}}'
# (or pass --build-arg BUN_DIGEST=@sha256:… --build-arg BUN_SLIM_DIGEST=@sha256:…). Empty: the tag alone.
ARG BUN_DIGEST=
ARG BUN_SLIM_DIGEST=

# --- 1. build: every workspace's dependencies, then the dashboard (apps/dashboard/dist) ---------
FROM oven/bun:${BUN_VERSION}${BUN_DIGEST} AS build
WORKDIR /app
# Manifests first: the install layer is reused until a package.json or the lockfile changes.
COPY package.json bun.lockb bunfig.toml turbo.json tsconfig.base.json ./
COPY apps/gateway/package.json apps/gateway/
COPY apps/dashboard/package.json apps/dashboard/
COPY packages/schema/package.json packages/schema/
COPY packages/providers/package.json packages/providers/
COPY packages/simulator/package.json packages/simulator/
COPY packages/sdk-chat/package.json packages/sdk-chat/
COPY packages/sdk-messages/package.json packages/sdk-messages/
COPY packages/mocks/package.json packages/mocks/
COPY bench/package.json bench/
COPY deploy/package.json deploy/
RUN bun install --frozen-lockfile
COPY . .
RUN bun run --cwd apps/dashboard build
# The release the image is labelled with (below) must be the one it holds: a mismatch fails the build.
ARG TURNPIKE_VERSION=""
RUN test -z "$TURNPIKE_VERSION" \
 || test "$TURNPIKE_VERSION" = "$(bun -p 'require("./apps/gateway/package.json").version')" \
 || (echo "TURNPIKE_VERSION=$TURNPIKE_VERSION is not apps/gateway/package.json's version" >&2; exit 1)

# --- 2. deps: production dependencies only (no test clients, no bundler) -------------------------
FROM build AS deps
RUN rm -rf node_modules apps/*/node_modules packages/*/node_modules bench/node_modules \
 && bun install --frozen-lockfile --production

# --- 3. runtime ----------------------------------------------------------------------------------
FROM oven/bun:${BUN_VERSION}-slim${BUN_SLIM_DIGEST} AS runtime
# docker build --build-arg TURNPIKE_VERSION="$(bun -p 'require("./apps/gateway/package.json").version')" …
# (docs/operations.md "Releases"); GET /health and `turnpike --version` read the same package.
ARG TURNPIKE_VERSION=""
LABEL org.opencontainers.image.title="Turnpike" \
      org.opencontainers.image.version="${TURNPIKE_VERSION}"
WORKDIR /app
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    TURNPIKE_DB=/data/turnpike.db \
    TURNPIKE_JOURNAL_DIR=/data/journal \
    BUN_CONFIG_MAX_HTTP_REQUESTS=4096 \
    MIMALLOC_PURGE_DELAY=1000
# The workspace layout as in the repository: the gateway reads its packages' sources through
# their `bun` export condition and the dashboard from apps/dashboard/dist.
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/package.json /app/tsconfig.base.json ./
COPY --from=deps /app/packages ./packages
COPY --from=deps /app/apps/gateway ./apps/gateway
COPY --from=build /app/apps/dashboard/dist ./apps/dashboard/dist
COPY --from=build /app/apps/dashboard/package.json ./apps/dashboard/package.json
# SQLite file and usage journal: a volume the unprivileged user owns.
RUN mkdir -p /data && chown -R bun:bun /data
VOLUME /data
USER bun
EXPOSE 8080
# `GET /health` answers while the process serves (README "Running several instances"); the slim
# image has no curl, so Bun's own fetch asks.
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["bun", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
WORKDIR /app/apps/gateway
CMD ["bun", "--max-http-header-size=1048576", "src/main.ts"]
