/** Browser entry: reads the embedded view data and renders the viewer. */
import { render } from 'preact'
import type { ViewData } from '../data/types.ts'
import { App } from './app.tsx'

const embedded = document.getElementById('dsh-data')
const root = document.getElementById('root')
if (embedded !== null && root !== null) {
  const data = JSON.parse(embedded.textContent ?? '{}') as ViewData
  render(<App data={data} />, root)
}
