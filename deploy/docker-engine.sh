#!/bin/sh
# A Docker engine for CI. `start`: Debian's docker.io and docker-compose when missing, and the
# daemon started when none answers (CI machines run no init system; its storage, overlay2
# under /var/lib/docker, persists, and with it the images built by earlier runs). `stop`:
# stops the daemon if `start` started it, so that CI leaves nothing running.
set -eu
marker=/run/screening-ci-dockerd.pid
case "${1:-start}" in
  start)
    if ! command -v dockerd >/dev/null || ! command -v docker-compose >/dev/null; then
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose >/dev/null
    fi
    if ! docker info >/dev/null 2>&1; then
      echo "starting dockerd (log: /var/log/dockerd.log)"
      setsid dockerd >>/var/log/dockerd.log 2>&1 < /dev/null &
      echo $! > "$marker"
      for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
    fi
    docker info >/dev/null 2>&1 || { echo "FATAL: no Docker daemon (see /var/log/dockerd.log)" >&2; exit 1; }
    echo "docker: server $(docker version -f '{{.Server.Version}}'), $(docker info -f '{{.Driver}}'); docker-compose $(docker-compose version --short)"
    ;;
  stop)
    [ -f "$marker" ] || exit 0
    pid=$(cat "$marker")
    rm -f "$marker"
    kill "$pid" 2>/dev/null || exit 0
    for _ in $(seq 1 30); do kill -0 "$pid" 2>/dev/null || exit 0; sleep 1; done
    echo "dockerd ($pid) still running after 30 s" >&2
    ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
