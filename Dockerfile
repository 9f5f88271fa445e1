# syntax=docker/dockerfile:1
# poolscope: the standalone Next.js server (`npm run build` → .next/standalone), run as a non-root user with a
# read-only root filesystem in mind: the only writable paths are /data (SQLite; mount a volume, or use
# PostgreSQL through DATABASE_URL) and /app/.next/cache (mount an emptyDir when the root filesystem is read-only).

# Node 24, the current LTS (Node 20's support ended in April 2026), in both stages: better-sqlite3's addon is compiled
# for the Node that runs it. `npm test` (its node24 suite) runs the unit tests, the build and a smoke start under it.
# Dependencies, with the toolchain better-sqlite3 needs to compile against this image's Node and glibc.
FROM node:24.22-bookworm-slim AS deps
WORKDIR /app
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund

FROM deps AS build
COPY . .
ENV NEXT_TELEMETRY_DISABLED=1
RUN npm run build

# The runtime: the standalone server and the traced node_modules it needs (better-sqlite3's binary included).
FROM node:24.22-bookworm-slim AS run
ENV NODE_ENV=production \
    NEXT_TELEMETRY_DISABLED=1 \
    PORT=3000 \
    HOSTNAME=0.0.0.0 \
    POOLSCOPE_DB_PATH=/data/poolscope.db
WORKDIR /app
# jemalloc as the process's malloc (what V8 allocates outside its heap: TLS state of the watch connections,
# buffers, SQLite's pages): glibc's main heap alone held ~66 MB resident at 100k VMs; with jemalloc RSS p50 fell
# by ~23 MB for the same CPU (docs/performance.md). The same path on every
# architecture (the library sits under the multiarch directory). bench/image.ts reads the ENV line below.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libjemalloc2 \
 && rm -rf /var/lib/apt/lists/* \
 && ln -s "/usr/lib/$(uname -m)-linux-gnu/libjemalloc.so.2" /usr/local/lib/libjemalloc.so.2
ENV LD_PRELOAD=/usr/local/lib/libjemalloc.so.2
# jemalloc with 2 arenas instead of 4 per core, and pages freed returned to the kernel after 1 s instead of 10 (its
# muzzy decay is 0 already; stated so a distribution's other default does not change it): at 100k VMs, ~15 MB less
# resident outside V8's heap for the same CPU. 1 arena with pages returned at once saved ~24 MB but cost ~6% of a
# core more (docs/performance.md). bench/image.ts reads this line.
ENV MALLOC_CONF=narenas:2,dirty_decay_ms:1000,muzzy_decay_ms:0
COPY --from=build --chown=root:root /app/.next/standalone ./
RUN mkdir -p /data /app/.next/cache && chown 1000:1000 /data /app/.next/cache
USER 1000:1000
VOLUME ["/data"]
EXPOSE 3000
# SIGTERM: poolscope ends live streams, lets the collector finish its cycle, releases its Lease, closes the
# store and exits within POOLSCOPE_SHUTDOWN_GRACE_SECONDS (25 s; keep the pod's grace period above it).
STOPSIGNAL SIGTERM
# --no-allocation-site-pretenuring: V8 otherwise allocates the objects of a code site whose objects once mostly
# outlived a young-generation collection straight in the old generation, for good; the collector's per-analysis
# instance tables and the Azure SDK's parsed VM lists were allocated there (3.3 of the 4.7 MB/s reaching it at
# 100k VMs). --heap-growing-percent=20: after a full GC the heap may grow by a fifth of what is live before the
# next one, not up to fourfold within the cap. Together, at 100k VMs: RSS 580-602 MB against 624-649 with the first
# alone and 640-700 with neither, for no more CPU (docs/performance.md). Command-line flags: NODE_OPTIONS takes
# neither. --max-semi-space-size=8: a young generation of 2 x 8 MB, not 2 x 16 (RSS p50 447 -> 429 MB at 100k
# VMs, for twice the young-generation collections: ~0.4% of a core more). bench/image.ts reads this line: the
# server benchmark runs what it says.
CMD ["node", "--no-allocation-site-pretenuring", "--heap-growing-percent=20", "--max-semi-space-size=8", "server.js"]
