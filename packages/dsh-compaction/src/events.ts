/**
 * The `compaction/*` session events, declared once: payload types (`SessionEventMap` augmentation),
 * schemas (`defineSessionEvent`), and the repair closer for a compaction a crash left open. Importing
 * the package registers them, so any process that loads a compacted log can read and repair it.
 */
import { defineSessionEvent, registerRepairCloser } from 'dsh-session'
import { z } from 'zod'
import { compactionClosers } from './repair.ts'
import type { CompactionEndData, CompactionStartData } from './types.ts'

declare module 'dsh-session' {
  interface SessionEventMap {
    /** A compaction begins and holds the session's compaction lock (dsh-compaction). Allowed between turns. */
    'compaction/start': CompactionStartData
    /** A compaction ends and releases the lock; `outcome` says whether the surface changed (dsh-compaction). */
    'compaction/end': CompactionEndData
  }
}

const count = z.number().int().nonnegative()

/** Schema of `compaction/start`. */
export const compactionStartSchema = z.object({
  id: z.string().min(1),
  trigger: z.enum(['threshold', 'overflow', 'manual']),
  strategy: z.enum(['prune', 'summarize']),
  window: count,
  tokensBefore: count,
  replaces: count,
  summarizes: count.optional(),
  turn: count.optional(),
  step: count.optional(),
})

/** Schema of `compaction/end`. */
export const compactionEndSchema = z.object({
  id: z.string().min(1),
  outcome: z.enum(['completed', 'rejected', 'failed', 'interrupted']),
  tokensAfter: count.optional(),
  reason: z.string().optional(),
  repaired: z.boolean().optional(),
})

defineSessionEvent('compaction/start', { schema: compactionStartSchema })
defineSessionEvent('compaction/end', { schema: compactionEndSchema })
registerRepairCloser('dsh-compaction', compactionClosers)
