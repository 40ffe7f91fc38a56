#!/usr/bin/env node
// The layering check (DESIGN §1: packages depend only downward). Reads every published package's
// package.json and source, and fails when
//   - a runtime dependency (`dependencies`, `peerDependencies`) names a dsh package of the same or a
//     higher layer than its own, or a storage backend depends on anything but dsh-session and dsh-llm;
//   - a file under `src/` imports a dsh package the package.json does not declare as a runtime
//     dependency, or a subpath that package does not export (no deep imports);
//   - a package is missing from the table below, or the table names a package that does not exist.
// Dev dependencies are not checked: a package's tests may mount packages above it (an adapter's tests
// run the agent loop), which ships nothing to its users. Run by `pnpm check`.
//
// Usage: node scripts/layers-check.mjs
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'

/** The published packages, bottom up. A package may depend only on packages of lower layers. */
const LAYERS = [
  ['dsh-llm'],
  ['dsh-session', 'dsh-llm-openai', 'dsh-llm-ai-sdk', 'dsh-replay'],
  ['dsh-session-postgres', 'dsh-invariants', 'dsh-agent-loop', 'dsh-otel'],
  ['dsh-fleet', 'dsh-compaction', 'dsh-mcp', 'dsh-viewer'],
]

/** Storage backends (DESIGN §1) and the only dsh packages they may depend on. */
const STORAGE = ['dsh-session-postgres']
const STORAGE_MAY_USE = ['dsh-llm', 'dsh-session']

const root = fileURLToPath(new URL('..', import.meta.url))
const layerOf = new Map(LAYERS.flatMap((names, layer) => names.map((name) => [name, layer])))

/** Every `packages/*` with a package.json that is not private: `{dir, manifest}`. */
function publishedPackages() {
  const found = []
  for (const entry of readdirSync(join(root, 'packages'), { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const dir = join(root, 'packages', entry.name)
    let manifest
    try {
      manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'))
    } catch {
      continue
    }
    if (manifest.private !== true) found.push({ dir, manifest })
  }
  return found
}

/** The `.ts` files under `dir`, recursively. */
function sources(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|mts)$/.test(entry.name))
    .map((entry) => join(entry.parentPath, entry.name))
}

/** `[specifier, line]` of every `from 'dsh-…'`, `import('dsh-…')` and `import 'dsh-…'` in `text`. */
function dshImports(text) {
  const found = []
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](dsh-[^'"]+)['"]/g
  for (const match of text.matchAll(pattern)) {
    found.push([match[1], text.slice(0, match.index).split('\n').length])
  }
  return found
}

/** The package name and subpath of a specifier: `dsh-llm/testing` → `['dsh-llm', './testing']`. */
function splitSpecifier(specifier) {
  const slash = specifier.indexOf('/')
  return slash < 0 ? [specifier, '.'] : [specifier.slice(0, slash), `.${specifier.slice(slash)}`]
}

const problems = []
const packages = publishedPackages()
const manifests = new Map(packages.map(({ manifest }) => [manifest.name, manifest]))

for (const name of layerOf.keys()) {
  if (!manifests.has(name))
    problems.push(`${name}: in the layer table of scripts/layers-check.mjs, but no such package`)
}

for (const { dir, manifest } of packages) {
  const name = manifest.name
  const layer = layerOf.get(name)
  if (layer === undefined) {
    problems.push(
      `${name}: not in the layer table of scripts/layers-check.mjs (DESIGN §1 says where it belongs)`,
    )
    continue
  }
  const runtime = new Set()
  for (const field of ['dependencies', 'peerDependencies']) {
    for (const dependency of Object.keys(manifest[field] ?? {})) {
      if (!dependency.startsWith('dsh-')) continue
      runtime.add(dependency)
      const below = layerOf.get(dependency)
      if (below === undefined) {
        problems.push(`${name}: ${field} names ${dependency}, which is not in the layer table`)
      } else if (below >= layer) {
        problems.push(
          `${name} (layer ${layer}): ${field} names ${dependency} (layer ${below}); packages depend only downward`,
        )
      }
      if (STORAGE.includes(name) && !STORAGE_MAY_USE.includes(dependency)) {
        problems.push(
          `${name}: a storage backend depends on ${STORAGE_MAY_USE.join(' and ')} only, but ${field} names ${dependency}`,
        )
      }
    }
  }
  for (const file of sources(join(dir, 'src'))) {
    const where = relative(root, file)
    for (const [specifier, line] of dshImports(readFileSync(file, 'utf8'))) {
      const [target, subpath] = splitSpecifier(specifier)
      if (target === name) continue
      if (!runtime.has(target)) {
        problems.push(
          `${where}:${line}: imports ${specifier}, which package.json does not declare as a dependency`,
        )
        continue
      }
      const exports = manifests.get(target)?.exports ?? {}
      if (!Object.hasOwn(exports, subpath)) {
        problems.push(`${where}:${line}: imports ${specifier}, a subpath ${target} does not export`)
      }
    }
  }
}

if (problems.length > 0) {
  console.error(`layers-check: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`)
  process.exit(1)
}
console.log(`layers-check: ${packages.length} packages depend only downward`)
