#!/usr/bin/env bash
# Deploy smoke test (CI runs it after the unit tests; see deploy/smoke.py for what it checks):
# docker engine + base image (deploy/ci-docker.sh), the images from this checkout
# (deploy/build-images.sh, + a Redis image from Debian's package since no registry is reachable),
# then the compose stack triaging an issue against the fake GitHub.
# Exit 0: passed, or skipped because docker cannot run on this machine (a "SKIP" line says so).
# REPROBOT_BUILD_TIMEOUT (default 2400 s) bounds the image builds, REPROBOT_SMOKE_TIMEOUT (default
# 1500 s) the stack part; the time of each step is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

base="${REPROBOT_BASE_IMAGE:-reprobot-base:bookworm}"
python="${PYTHON:-.venv/bin/python}"
start=$SECONDS

rc=0
bash deploy/ci-docker.sh || rc=$?
if [ "$rc" = 3 ]; then
  echo "== deploy smoke SKIPPED: docker cannot run on this machine (the SKIP line above says why)"
  exit 0
fi
[ "$rc" = 0 ] || exit "$rc"
echo "   docker ready at $((SECONDS - start)) s"

# Bounded like the stack part: a hung mirror or index must not eat CI's 90 minutes.
timeout -k 30 "${REPROBOT_BUILD_TIMEOUT:-2400}" bash deploy/build-images.sh --base "$base" --no-runner
echo "== docker build reprobot-redis:ci (Debian's redis-server on $base)"
timeout -k 30 600 docker build -q -f deploy/Dockerfile.redis --build-arg "BASE_IMAGE=$base" \
  -t reprobot-redis:ci deploy
echo "   images ready at $((SECONDS - start)) s"

echo "== compose stack smoke"
BASE_IMAGE="$base" REDIS_IMAGE=reprobot-redis:ci \
  timeout -s INT -k 60 "${REPROBOT_SMOKE_TIMEOUT:-1500}" "$python" deploy/smoke.py
echo "== deploy smoke passed in $((SECONDS - start)) s"
