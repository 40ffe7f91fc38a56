/** One self-contained HTML page: styles, the view data and the app bundle, all inline. */
import type { ViewData } from '../data/types.ts'
import { pagePolicy } from './policy.ts'
import { STYLES } from './styles.ts'

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * The page for `data`, with `bundle` (the browser app, `dist/app.global.js`) inlined. Nothing is
 * loaded from anywhere else, and the page says so: its Content-Security-Policy (`pagePolicy`, in a
 * `<meta>` element, so it holds for a page saved to a file too) allows its own style and script by
 * hash and no network access. The data is embedded as JSON with `<` escaped, so no event text can
 * end the script element.
 */
export function renderPage(data: ViewData, bundle: string): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c')
  const script = bundle.replace(/<\/script/gi, '<\\/script')
  const policy = pagePolicy({ styles: [STYLES], scripts: [script] })
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${policy}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(`dsh session ${data.sessionId ?? data.file}`)}</title>`,
    `<style>${STYLES}</style>`,
    '</head><body><div id="root"></div>',
    `<script id="dsh-data" type="application/json">${json}</script>`,
    `<script>${script}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}
