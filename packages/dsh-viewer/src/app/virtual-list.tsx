/** A fixed-row-height virtualized list: only the rows in view (plus a margin) are in the DOM. */
import type { ComponentChildren } from 'preact'
import { useEffect, useRef, useState } from 'preact/hooks'

/** Props of `VirtualList`. */
export interface VirtualListProps {
  readonly count: number
  readonly rowHeight: number
  readonly row: (index: number) => ComponentChildren
  /** When set, the list scrolls so that this row is in view (centered) whenever the value changes. */
  readonly scrollTo?: number | undefined
  readonly testId?: string
}

const MARGIN = 20

/** Renders `count` rows of `rowHeight` px, drawing only the visible window. */
export function VirtualList({ count, rowHeight, row, scrollTo, testId }: VirtualListProps) {
  const box = useRef<HTMLDivElement>(null)
  const [top, setTop] = useState(0)
  const [height, setHeight] = useState(600)
  useEffect(() => {
    const element = box.current
    if (element === null) return
    const resize = () => setHeight(element.clientHeight)
    resize()
    const observer = new ResizeObserver(resize)
    observer.observe(element)
    return () => observer.disconnect()
  }, [])
  useEffect(() => {
    const element = box.current
    if (element === null || scrollTo === undefined) return
    const target = Math.max(0, scrollTo * rowHeight - element.clientHeight / 2)
    element.scrollTop = target
    setTop(target)
  }, [scrollTo, rowHeight])
  const first = Math.max(0, Math.floor(top / rowHeight) - MARGIN)
  const last = Math.min(count, Math.ceil((top + height) / rowHeight) + MARGIN)
  const rows = []
  for (let i = first; i < last; i++) {
    rows.push(
      <div key={i} class="vrow" style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}>
        {row(i)}
      </div>,
    )
  }
  return (
    <div
      class="vlist"
      ref={box}
      data-testid={testId}
      onScroll={(e) => setTop((e.currentTarget as HTMLDivElement).scrollTop)}
    >
      <div style={{ height: `${count * rowHeight}px`, position: 'relative' }}>{rows}</div>
    </div>
  )
}
