#!/bin/sh
# A Docker engine for CI: Debian's docker.io and docker-compose when missing, and the daemon
# started when none answers (CI machines run no init system; its storage, overlay2 under
# /var/lib/docker, persists, and with it the images built by earlier runs).
set -eu
if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose >/dev/null
fi
if ! docker info >/dev/null 2>&1; then
  echo "starting dockerd (log: /var/log/dockerd.log)"
  setsid dockerd >>/var/log/dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi
docker info >/dev/null 2>&1 || { echo "FATAL: no Docker daemon (see /var/log/dockerd.log)" >&2; exit 1; }
echo "docker: server $(docker version -f '{{.Server.Version}}'), $(docker info -f '{{.Driver}}'); $(docker-compose version --short | sed 's/^/docker-compose /')"
