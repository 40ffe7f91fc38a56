/**
 * Tool-call deadlines without a timer per call. A tool call settles long before its timeout in
 * the common case, so arming and clearing a `setTimeout` for every call is wasted work on the step
 * path. Deadlines with the same duration are queued in start order (so each queue is sorted by
 * expiry) and one timer, armed for the earliest live deadline, serves them all. The timer keeps
 * the process alive only while some deadline is live.
 */

/** A pending deadline; `cancel()` once the guarded work settled. */
export interface Deadline {
  cancel(): void
}

interface Entry {
  readonly at: number
  readonly fire: () => void
  live: boolean
}

const queues = new Map<number, Entry[]>()
let live = 0
let timer: ReturnType<typeof setTimeout> | undefined
let armedAt = Number.POSITIVE_INFINITY

function earliest(): number {
  let at = Number.POSITIVE_INFINITY
  for (const queue of queues.values()) {
    const head = queue[0]
    if (head !== undefined && head.at < at) at = head.at
  }
  return at
}

function arm(): void {
  const at = earliest()
  if (at === armedAt && timer !== undefined) return
  if (timer !== undefined) clearTimeout(timer)
  timer = undefined
  armedAt = at
  if (at === Number.POSITIVE_INFINITY) return
  timer = setTimeout(expire, Math.max(0, at - Date.now()))
  if (live === 0) timer.unref()
}

function expire(): void {
  timer = undefined
  armedAt = Number.POSITIVE_INFINITY
  const now = Date.now()
  const due: Entry[] = []
  for (const [ms, queue] of queues) {
    let cut = 0
    while (cut < queue.length) {
      const entry = queue[cut]
      if (entry === undefined || (entry.live && entry.at > now)) break
      if (entry.live) due.push(entry)
      cut++
    }
    if (cut === queue.length) queues.delete(ms)
    else if (cut > 0) queue.splice(0, cut)
  }
  for (const entry of due) {
    entry.live = false
    live--
  }
  if (live === 0) queues.clear()
  arm()
  for (const entry of due) entry.fire()
}

/** Calls `fire` after `ms` milliseconds unless the returned deadline is cancelled first. */
export function deadline(ms: number, fire: () => void): Deadline {
  const entry: Entry = { at: Date.now() + ms, fire, live: true }
  let queue = queues.get(ms)
  if (queue === undefined) {
    queue = []
    queues.set(ms, queue)
  }
  queue.push(entry)
  live++
  if (live === 1) timer?.ref()
  if (entry.at < armedAt) arm()
  return {
    cancel: () => {
      if (!entry.live) return
      entry.live = false
      live--
      // Dead entries are dropped lazily when the timer fires; with nothing live, drop them now and
      // let the process exit if nothing else keeps it alive.
      if (live === 0) {
        queues.clear()
        timer?.unref()
      }
    },
  }
}
