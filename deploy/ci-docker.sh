#!/usr/bin/env bash
# Make a docker engine usable on this machine (CI, and the docker sandbox tests), idempotently:
#   1. install what is missing: docker.io docker-compose debootstrap iptables (apt-get, as root);
#   2. start dockerd unless `docker info` already answers (log: /var/log/reprobot-dockerd.log),
#      trying overlay2 first, then the vfs storage driver;
#   3. import the Debian bookworm base image (default reprobot-base:bookworm) unless present:
#      made with `debootstrap --variant=minbase` from the machine's own apt mirror, since no
#      registry can be pulled from; the rootfs tarball is cached (REPROBOT_CI_CACHE) so later
#      runs only `docker import` it.
# Exit codes: 0 ready; 3 docker cannot run on this machine (one "SKIP: ..." line says why;
# callers skip the docker checks); anything else is a real failure.
#
#   deploy/ci-docker.sh            # as root
#   REPROBOT_BASE_IMAGE=name:tag REPROBOT_CI_CACHE=/path deploy/ci-docker.sh
set -uo pipefail

BASE_IMAGE="${REPROBOT_BASE_IMAGE:-reprobot-base:bookworm}"
CACHE="${REPROBOT_CI_CACHE:-/var/cache/reprobot-ci}"
LOG=/var/log/reprobot-dockerd.log
# Packages baked into the base so image builds need no apt for them (the Dockerfiles install
# only what the base lacks). Changing this list makes a new tarball (the name has its hash).
INCLUDE="python3,python3-venv,ca-certificates,bubblewrap,g++,git,procps,tini"

skip() {
  echo "SKIP: docker cannot run on this machine: $*" >&2
  exit 3
}
say() { echo "ci-docker: $*"; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo -n "$@"
  else return 126
  fi
}

docker_ok() { docker info >/dev/null 2>&1; }

# ---------------------------------------------------------------- 1. packages
missing=()
command -v dockerd >/dev/null 2>&1 || missing+=(docker.io)
command -v docker-compose >/dev/null 2>&1 || missing+=(docker-compose)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)
if ((${#missing[@]})); then
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  as_root apt-get update -qq >/dev/null 2>&1 || skip "apt-get update failed (not root, or no mirror)"
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 \
    || skip "apt-get install ${missing[*]} failed"
fi

# ---------------------------------------------------------------- 2. the daemon
start_dockerd() {
  # $@: extra dockerd flags. Returns 0 once `docker info` answers, else stops that dockerd.
  say "starting dockerd $*"
  as_root sh -c "dockerd $* >>$LOG 2>&1 & echo \$! > /run/reprobot-dockerd.pid" || return 1
  for _ in $(seq 60); do
    docker_ok && return 0
    sleep 0.5
  done
  local pid
  pid="$(cat /run/reprobot-dockerd.pid 2>/dev/null || true)"
  [ -n "$pid" ] && as_root kill "$pid" 2>/dev/null
  sleep 2
  return 1
}

if docker_ok; then
  say "dockerd already running"
else
  [ "$(id -u)" = 0 ] || (command -v sudo >/dev/null && sudo -n true 2>/dev/null) \
    || skip "\`docker info\` fails ($({ docker info 2>&1 || true; } | grep -m1 -i -E 'error|denied|cannot' || echo 'no answer')) and starting dockerd needs root"
  start_dockerd || start_dockerd --storage-driver=vfs \
    || skip "dockerd does not start (tried overlay2 and vfs; see $LOG: $(tail -n 3 $LOG 2>/dev/null | tr '\n' ' '))"
fi
say "$(docker info --format 'engine {{.ServerVersion}}, storage {{.Driver}}, cgroup v{{.CgroupVersion}}' 2>/dev/null)"

# ---------------------------------------------------------------- 3. the base image
mirror() {
  # The Debian bookworm mirror from the machine's apt sources (one-line or deb822 format).
  python3 "$(dirname "$0")/apt_mirror.py" 2>/dev/null || echo "http://deb.debian.org/debian"
}

tag="$(echo "$INCLUDE" | sha256sum | cut -c1-12)"
have="$(docker image inspect -f '{{index .Config.Labels "org.reprobot.base"}}' "$BASE_IMAGE" 2>/dev/null || true)"
if [ "$have" = "$tag" ]; then
  say "base image $BASE_IMAGE present ($tag)"
else
  as_root mkdir -p "$CACHE" || skip "cannot create the cache folder $CACHE"
  tarball="$CACHE/bookworm-minbase-$tag.tar"
  if [ ! -s "$tarball" ]; then
    m="$(mirror)"
    root="$(mktemp -d /tmp/reprobot-rootfs.XXXXXX)"
    say "debootstrap bookworm from $m (a few minutes; cached in $tarball)"
    start=$SECONDS
    if ! as_root timeout -k 30 1800 debootstrap --variant=minbase --include="$INCLUDE" bookworm "$root" "$m" \
        >"$CACHE/debootstrap.log" 2>&1; then
      tail -n 5 "$CACHE/debootstrap.log" >&2
      as_root rm -rf "$root"
      echo "ci-docker: debootstrap failed (log: $CACHE/debootstrap.log)" >&2
      exit 1
    fi
    as_root rm -rf "$root/var/cache/apt/archives"/*.deb "$root/var/lib/apt/lists"/*
    as_root sh -c "tar -C '$root' -c . > '$tarball.tmp' && mv '$tarball.tmp' '$tarball'"
    as_root rm -rf "$root"
    say "debootstrap done in $((SECONDS - start)) s"
  fi
  say "docker import $tarball as $BASE_IMAGE"
  docker import --change "LABEL org.reprobot.base=$tag" "$tarball" "$BASE_IMAGE" >/dev/null || { echo "ci-docker: docker import failed" >&2; exit 1; }
fi

# A container must really start (namespaces, cgroups, the runtime), not just the daemon.
if ! out="$(docker run --rm --network none "$BASE_IMAGE" python3 -c 'print("ok")' 2>&1)"; then
  skip "a container does not start: $out"
fi
say "docker ready: $BASE_IMAGE runs ($out)"
