#!/usr/bin/env bash
# Build the reprobot images from this checkout:
#   reprobot:latest         (deploy/Dockerfile: every role of the stack)
#   reprobot-runner:latest  (deploy/Dockerfile.runner: the docker sandbox backend's image)
# Python packages come from wheels made here with `pip wheel` (deploy/wheels/, reused between
# runs), so `docker build` needs no access to PyPI. Usage:
#   deploy/build-images.sh [--base IMAGE] [--no-runner] [--pip PIP]
#     --base IMAGE   base image (default python:3.11-slim-bookworm; CI: reprobot-base:bookworm)
#     --pip PIP      pip used to make the wheels (default .venv/bin/pip, else pip3)
set -euo pipefail
cd "$(dirname "$0")/.."

base="python:3.11-slim-bookworm"
runner=1
pip=""
while (($#)); do
  case "$1" in
    --base) base="$2"; shift 2 ;;
    --no-runner) runner=0; shift ;;
    --pip) pip="$2"; shift 2 ;;
    *) echo "build-images.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [ -z "$pip" ]; then
  if [ -x .venv/bin/pip ]; then pip=.venv/bin/pip; else pip=pip3; fi
fi

wheels=deploy/wheels
echo "== wheels into $wheels (pip wheel; cached between runs)"
start=$SECONDS
# async-timeout: redis needs it on Python < 3.11.3 (Debian bookworm's python3 is 3.11.2)
"$pip" wheel -q --wheel-dir "$wheels" '.[tvm]' 'setuptools>=68' wheel 'async-timeout>=4.0.3'
rm -f "$wheels"/reprobot-*.whl   # reprobot itself is installed from the source in the image
echo "   $(ls "$wheels"/*.whl | wc -l) wheels, $((SECONDS - start)) s"

echo "== docker build reprobot:latest (base $base)"
start=$SECONDS
docker build -q -f deploy/Dockerfile --build-arg "BASE_IMAGE=$base" -t reprobot:latest .
echo "   $((SECONDS - start)) s"
if ((runner)); then
  echo "== docker build reprobot-runner:latest (base $base)"
  start=$SECONDS
  docker build -q -f deploy/Dockerfile.runner --build-arg "BASE_IMAGE=$base" -t reprobot-runner:latest .
  echo "   $((SECONDS - start)) s"
fi
