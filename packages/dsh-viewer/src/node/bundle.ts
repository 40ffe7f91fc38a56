/** Finds the built browser app: beside this module in `dist/`, or in `../dist/` when run from `src/`. */
import { readFileSync } from 'node:fs'
import { HarnessError } from 'dsh-llm'

const CANDIDATES = ['./app.global.js', '../dist/app.global.js', '../../dist/app.global.js']

/**
 * The app bundle's source. Throws `HarnessError` code `VIEWER_NOT_BUILT` naming the places it looked
 * when the package has not been built (`pnpm --filter dsh-viewer build`).
 */
export function loadAppBundle(): string {
  const tried: string[] = []
  for (const candidate of CANDIDATES) {
    const url = new URL(candidate, import.meta.url)
    try {
      return readFileSync(url, 'utf8')
    } catch {
      tried.push(url.pathname)
    }
  }
  throw new HarnessError(
    'VIEWER_NOT_BUILT',
    `dsh-viewer: the browser app is not built (looked for ${tried.join(', ')}); run pnpm --filter dsh-viewer build`,
  )
}
