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
# As the official Debian image (its docker-clean): no recommends, and apt keeps no
# downloaded packages nor its binary caches (about 90 MB after an `apt-get update`) in a layer.
cat > "$root/etc/apt/apt.conf.d/90offline-images" <<'APT'
APT::Install-Recommends "false";
APT::Install-Suggests "false";
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb
tar -C "$root" -c . | docker import --change "LABEL screening.offline-images.hash=$hash" --change 'CMD ["bash"]' - "$tag" >/dev/null
