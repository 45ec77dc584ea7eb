#!/bin/sh
# The Debian base every offline image starts from: a minimal trixie (debootstrap
# --variant=minbase) imported as a local image. Usage: rootfs.sh TAG HASH
set -eu
tag=$1 hash=$2
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase trixie "$root" "$mirror" >/dev/null
# As the official images: no apt caches or package lists kept, no recommends.
printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' > "$root/etc/apt/apt.conf.d/90offline-images"
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | docker import --change "LABEL screening.offline-images.hash=$hash" --change 'CMD ["bash"]' - "$tag" >/dev/null
