/** Joining an endpoint path onto a base URL that may carry a query string. */

/**
 * `base` with `path` appended to its path (one `/` between them, trailing slashes of the base path
 * dropped), its query string kept after the joined path and any fragment dropped:
 * `https://h/v1/?api-version=1` + `chat/completions` → `https://h/v1/chat/completions?api-version=1`.
 * `base` must be an absolute URL (the caller has checked it).
 */
export function joinPath(base: string, path: string): string {
  const url = new URL(base)
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`
  url.hash = ''
  return url.href
}
