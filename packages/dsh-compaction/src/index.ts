export {
  compactionClosers,
  compactionEndSchema,
  compactionMessagePrefix,
  compactionStartSchema,
} from 'dsh-session'
export { type CompactInput, compactSession } from './compact.ts'
export { balancedBoundaries, chooseCut } from './cut.ts'
export { CompactionError, CompactionErrorCode } from './errors.ts'
export { contextWindowFor, DEFAULT_CONTEXT_WINDOW, KNOWN_CONTEXT_WINDOWS } from './models.ts'
export { Compaction, Compaction as default } from './plugin.ts'
export { contextPressure } from './pressure.ts'
export { DEFAULT_PRUNE, type PruneEntry, planPrune, prunedText } from './prune.ts'
export { type CompactionSettings, resolveSettings } from './settings.ts'
export {
  COMPACTION_SOURCE,
  DEFAULT_SUMMARY_INSTRUCTION,
  readSummary,
  SUMMARY_HEADING,
  type SummaryAnswer,
  summaryInstruction,
  summaryMessage,
  summaryRequest,
} from './summarize.ts'
export { charsPerFour, TokenEstimator } from './tokens.ts'
export type * from './types.ts'
