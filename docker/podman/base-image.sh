#!/usr/bin/env bash
# Builds a local Debian base image for docker/Dockerfile where no image registry is reachable:
# debootstrap a minimal Debian of the host's release (python3 + venv, from the host's own apt mirror),
# then `podman import` it. Usage (as root):  docker/podman/base-image.sh [IMAGE]   (default dynlocust-base:CODENAME)
# Then: podman build --pull=never --build-arg BASE=localhost/IMAGE -f docker/Dockerfile -t dynlocust:local .
# The debootstrap tarball is kept in $DYNLOCUST_PODMAN_CACHE (default /var/cache/dynlocust-podman) for the next time.
set -euo pipefail

codename=$(. /etc/os-release && echo "${VERSION_CODENAME:?no VERSION_CODENAME in /etc/os-release}")
image=${1:-dynlocust-base:$codename}
cache=${DYNLOCUST_PODMAN_CACHE:-/var/cache/dynlocust-podman}

if podman image exists "$image"; then
  echo "base image $image exists"
  exit 0
fi
# the mirror the host's apt already uses for its own release (never a hard-coded host)
mirror=$(apt-get indextargets --format '$(REPO_URI) $(RELEASE)' 'Created-By: Packages' |
  awk -v r="$codename" '$2 == r { print $1; exit }')
if [ -z "$mirror" ]; then
  echo "base-image.sh: error: the host's apt sources list no '$codename' suite (run apt-get update?)" >&2
  exit 2
fi
mkdir -p "$cache"
tarball="$cache/debian-$codename-minbase-python3.tar"
if [ ! -s "$tarball" ]; then
  root=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  debootstrap --variant=minbase --include=python3,python3-venv "$codename" "$root" "$mirror" >"$root.log" 2>&1 ||
    { tail -20 "$root.log" >&2; exit 1; }
  rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
  tar -C "$root" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
  rm -f "$root.log"
fi
podman import --quiet --change 'CMD ["/bin/bash"]' "$tarball" "$image" >/dev/null
echo "base image $image imported from $tarball"
