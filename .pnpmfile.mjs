// Shapes the package.json that `pnpm pack` / `pnpm publish` put in a tarball. The `source` export
// condition (TypeScript sources, for this repository's own tests and typecheck) is repo-only: the
// published exports name only the built `dist` files. Scripts and devDependencies stay home too.

/** Removes every `source` condition from an exports map, at any depth. */
function withoutSource(exports) {
  if (exports === null || typeof exports !== 'object') return exports
  if (Array.isArray(exports)) return exports.map(withoutSource)
  const out = {}
  for (const [key, value] of Object.entries(exports)) {
    if (key === 'source') continue
    out[key] = withoutSource(value)
  }
  return out
}

function beforePacking(pkg) {
  if (pkg.exports !== undefined) pkg.exports = withoutSource(pkg.exports)
  delete pkg.devDependencies
  delete pkg.scripts
  return pkg
}

export const hooks = { beforePacking }
