export { checkSessionFile, type FileCheck, type FileViolation } from './check-file.ts'
export { compareRequests, type Difference, firstDifference } from './compare.ts'
export { formatViolation, InvariantError, InvariantErrorCode } from './errors.ts'
export { type ScannedLog, type ScanOptions, scanRecordedLog } from './file-scan.ts'
export { type LogCheckCounts, SessionLogChecker } from './log-checker.ts'
export { LogGrammar, type LogOrigin } from './log-grammar.ts'
export { type ModelCall, splitModelCalls } from './model-calls.ts'
export { checkSessionLog } from './offline.ts'
export {
  type RebuiltRequest,
  RequestDeriver,
  rebuildRequest,
  reconstructRequests,
  verifyLoopRequest,
} from './reconstruct.ts'
export { eventLine, type RecordedLog, readRecordedLog } from './recorded-log.ts'
export {
  CHECK_NAMES,
  InvariantRegistry,
  InvariantRegistry as default,
  InvariantRegistry as Invariants,
  observeRegistries,
  resolveChecks,
} from './registry.ts'
export { RequestChecker } from './request-checker.ts'
export { RequestFold } from './request-fold.ts'
export { checkedStream, describeChunk, StreamGrammar } from './stream-grammar.ts'
export type { CheckName, InvariantCounters, InvariantsConfig, Violation } from './types.ts'
