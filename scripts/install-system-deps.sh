#!/usr/bin/env bash
# System packages imgpu's tests need on a Debian 12 (bookworm) machine without a GPU:
#  - a software WebGPU adapter: Mesa 25 lavapipe (Vulkan) from bookworm-backports — bookworm's own Mesa 22
#    lavapipe is refused by Dawn (missing shaderUniform*ArrayDynamicIndexing); and its llvmpipe OpenGL ES through EGL
#    (libegl-mesa0, libgl1-mesa-dri, libegl1, libgles2) for Dawn's `--backend opengles` (test/cli/backend-repeat.test.ts);
#  - Debian's chromium for the browser test (WebGPU on SwiftShader);
#  - ffmpeg, through which `imgpu detect` reads and writes video (the video tests run it);
#  - libturbojpeg0-dev and a C compiler, for imgpu's native JPEG codec, and libjpeg62-turbo-dev for the GPU JPEG
#    codec's CPU halves (the decoder's entropy stage, the encoder's entropy coder) (scripts/build-native.mjs, run by
#    npm ci: so run this script before `npm install`); libpng-dev for its native PNG decoder (libpng as cv2.imread);
#  - redis-server (Debian's 7.0): the scale-out tests (imgpu submit/worker/status on BullMQ) start their own server; openssl makes their TLS certificates
#    on loopback;
#  - Debian's python3-opencv, python3-scipy and python3-skimage: the references of the randomized differential test
#    (test/parity), run through /usr/bin/python3; python3-zarr reads and writes the OME-Zarr of test/io/zarr.test.ts;
#    python3-pil, python3-nibabel and python3-pydicom are the format fuzzer's references (test/fuzz/format-fuzz.test.ts).
# Idempotent; needs root (CI runs as root). Waits (up to 10 minutes) for another apt/dpkg holding the lock.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
if ! grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
  echo 'deb http://deb.debian.org/debian bookworm-backports main' | $SUDO tee /etc/apt/sources.list.d/imgpu-backports.list >/dev/null
fi
# Another apt (unattended-upgrades, a second install) may hold the dpkg lock: wait for it instead of failing at once.
APT=($SUDO apt-get -o DPkg::Lock::Timeout=600)
have() { dpkg-query -W -f='${Status} ${Version}\n' "$1" 2>/dev/null | grep -q "install ok installed${2:+ .*$2}"; }
if ! have mesa-vulkan-drivers bpo || ! have libegl-mesa0 bpo || ! have libgl1-mesa-dri bpo || ! have libgles2 || ! have chromium || ! have ffmpeg || ! have libturbojpeg0-dev || ! have libjpeg62-turbo-dev || ! have libpng-dev || ! have gcc \
  || ! have python3-opencv || ! have python3-scipy || ! have python3-skimage || ! have python3-zarr || ! have python3-pil || ! have python3-nibabel || ! have python3-pydicom || ! have redis-server || ! have openssl; then
  "${APT[@]}" update -qq
  "${APT[@]}" install -y -qq -t bookworm-backports mesa-vulkan-drivers libvulkan1 libegl-mesa0 libgl1-mesa-dri libegl1 libgles2 >/dev/null
  "${APT[@]}" install -y -qq chromium ffmpeg libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev gcc libc6-dev python3-opencv python3-scipy python3-skimage python3-zarr python3-pil python3-nibabel python3-pydicom redis-server openssl >/dev/null
fi
echo "system deps: $(dpkg-query -W -f='${Package} ${Version}; ' mesa-vulkan-drivers chromium ffmpeg libturbojpeg0-dev libjpeg62-turbo-dev libpng-dev python3-opencv redis-server)"
