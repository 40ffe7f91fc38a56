/** One self-contained HTML page: styles, the view data and the app bundle, all inline. */
import type { ViewData } from '../data/types.ts'
import { STYLES } from './styles.ts'

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
}

/**
 * The page for `data`, with `bundle` (the browser app, `dist/app.global.js`) inlined. Nothing is
 * loaded from anywhere else. The data is embedded as JSON with `<` escaped, so no event text can end
 * the script element.
 */
export function renderPage(data: ViewData, bundle: string): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c')
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(`dsh session ${data.sessionId ?? data.file}`)}</title>`,
    `<style>${STYLES}</style>`,
    '</head><body><div id="root"></div>',
    `<script id="dsh-data" type="application/json">${json}</script>`,
    `<script>${bundle.replace(/<\/script/gi, '<\\/script')}</script>`,
    '</body></html>',
    '',
  ].join('\n')
}
