#!/usr/bin/env bash
# System packages imgpu's tests need on a Debian 12 (bookworm) machine without a GPU:
#  - a software WebGPU adapter: Mesa 25 lavapipe (Vulkan) from bookworm-backports — bookworm's own Mesa 22
#    lavapipe is refused by Dawn (missing shaderUniform*ArrayDynamicIndexing);
#  - Debian's chromium for the browser test (WebGPU on SwiftShader);
#  - ffmpeg, through which `imgpu detect` reads and writes video (the video tests run it);
#  - libturbojpeg0-dev and a C compiler, for imgpu's native JPEG codec (scripts/build-native.mjs, run by npm ci).
# Idempotent; needs root (CI runs as root).
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' | $SUDO tee /etc/apt/sources.list.d/imgpu-backports.list >/dev/null
fi
have() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q "install ok installed${2:+ .*$2}"; }
if ! have mesa-vulkan-drivers bpo || ! have chromium || ! have ffmpeg || ! have libturbojpeg0-dev || ! have gcc; then
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 >/dev/null
  $SUDO apt-get install -y -qq chromium ffmpeg libturbojpeg0-dev gcc libc6-dev >/dev/null
fi
echo "system deps: $(dpkg-query -W -f='${Package} ${Version}; ' mesa-vulkan-drivers chromium ffmpeg libturbojpeg0-dev)"
