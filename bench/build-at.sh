#!/usr/bin/env bash
# Makes a build of one commit for bench/batch-before-after.ts: `bash bench/build-at.sh <commit> <dir>`, from the
# checkout's root, <dir> inside it (e.g. .bench-builds/before, git-ignored) so that the build's modules resolve the
# checkout's node_modules by Node's walk up the folders. The commit's tree (git archive) is compiled with the
# checkout's TypeScript and its native pieces built; then only what a batch runs is kept (bin/, package.json,
# dist/src, dist/native, dist/bench): about 9 MB a build, small enough to `carry` to the GPU machine.
set -euo pipefail
commit=${1:?usage: bench/build-at.sh <commit> <dir>}
dir=${2:?usage: bench/build-at.sh <commit> <dir>}
root=$(pwd)
[ -d node_modules ] || { echo "run from the checkout's root (node_modules/ not found)" >&2; exit 2; }
case "$(realpath -m "$dir")" in "$root"/*) ;; *) echo "$dir must be inside the checkout (its modules resolve ./node_modules)" >&2; exit 2 ;; esac
rm -rf "$dir" && mkdir -p "$dir"
git archive "$commit" | tar -x -C "$dir"
cd "$dir"
PATH="$root/node_modules/.bin:$PATH"
ln -s "$root/node_modules" node_modules # for the build only (build-native.mjs looks for its headers here)
tsc -p .
node scripts/build-native.mjs
[ -n "$(ls dist/native/*.node 2>/dev/null)" ] || { echo "the native pieces did not build" >&2; exit 1; }
rm -rf dist/test dist/playground
find . -mindepth 1 -maxdepth 1 ! -name bin ! -name dist ! -name package.json -exec rm -rf {} +
echo "$(git -C "$root" rev-parse --short "$commit") built in $dir ($(du -sh . | cut -f1))"
