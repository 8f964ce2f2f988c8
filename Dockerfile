# toolgate serve as a container (issue 37). Build: docker build -t toolgate .
# Two stages: the build stage has the dev toolchain; the runtime stage has only what `serve` loads.

FROM node:22-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# No install scripts: none of the runtime dependencies needs one (esbuild's binary comes from its
# per-platform package), and the dev ones run from the registry's own builds.
RUN npm ci --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:22-slim
# bubblewrap runs bash (--bash) and sandboxed upstreams without root: it needs unprivileged user
# namespaces from the kernel and the container runtime (see docs/guide/deploy.md).
RUN apt-get update \
  && apt-get install -y --no-install-recommends bubblewrap ca-certificates \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /src/package.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
# The image's own unprivileged user (uid 1000 in node images); the workspace is the only place it writes.
RUN mkdir -p /workspace && chown node:node /workspace
USER node
ENV NODE_ENV=production
EXPOSE 8080
ENTRYPOINT ["node", "dist/cli/bin.cjs", "serve"]
CMD ["--http", "8080", "--host", "0.0.0.0", "--root", "/workspace", "--config", "/etc/toolgate/config.json"]
