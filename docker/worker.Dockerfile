# Worker image for pi-agent-board container targets: node (pinned), pi 1.6, git and bash. The board's
# own worker-side files are NOT in the image: they are mounted read-only at run time, so upgrading the
# package needs no new image.
#
# Build (docker or podman, from anywhere; the file needs no build context):
#   docker build -t pi-agent-board-worker:pi-1.6 - < docker/worker.Dockerfile
#   podman build -t pi-agent-board-worker:pi-1.6 - < docker/worker.Dockerfile
# Then: /agent-board targets add box --container docker --image pi-agent-board-worker:pi-1.6
FROM docker.io/library/node:22.19.0-bookworm-slim

ARG PI_VERSION=1.6.0

# git for the agent's work and our wip snapshots; ca-certificates for the model provider's TLS;
# bash is pi's shell; tini is not needed (the board runs containers with --init).
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bash ca-certificates \
 && rm -rf /var/lib/apt/lists/*

RUN npm install -g --omit=dev "@earendil-works/pi-coding-agent@${PI_VERSION}" \
 && npm cache clean --force \
 && pi --version

# The board runs the container as the user's uid (--user), with a read-only root and a tmpfs /tmp
# as HOME; these directories are the mount points it uses.
RUN mkdir -p /workspace /ab/pkg/runner /ab/pkg/src /ab/pkg/skills /ab/run /ab/session /ab/pi \
 && touch /ab/pkg/package.json
ENV HOME=/tmp PI_SKIP_VERSION_CHECK=1
WORKDIR /workspace
CMD ["pi", "--version"]
