/** The page's Content-Security-Policy: no network access, only its own inline style and script. */
import { createHash } from 'node:crypto'

/** The inline elements a page carries, each exactly as written between its tags. */
export interface InlineContent {
  readonly styles: readonly string[]
  readonly scripts: readonly string[]
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`
}

/**
 * A policy that allows the given inline styles and scripts (by hash) and nothing else: no fetch,
 * no images, fonts, frames, forms, plugins or base URL changes (`default-src 'none'`). Style
 * attributes are not allowed either; the app sets styles through the DOM, which a policy does not
 * restrict.
 */
export function pagePolicy(inline: InlineContent): string {
  const list = (texts: readonly string[]) => (texts.length === 0 ? "'none'" : texts.map(sha256).join(' '))
  return [
    "default-src 'none'",
    `script-src ${list(inline.scripts)}`,
    `style-src ${list(inline.styles)}`,
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ')
}

const META = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/

/**
 * The policy a served page gets as a header: the one its `<meta>` declares (what `renderPage`
 * writes), else `default-src 'none'`; plus `frame-ancestors 'none'`, which only a header can carry.
 */
export function servedPolicy(html: string): string {
  const declared = META.exec(html)?.[1] ?? "default-src 'none'"
  return `${declared}; frame-ancestors 'none'`
}
