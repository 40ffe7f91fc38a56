export { compareRequests, type Difference, firstDifference } from './derive/compare.ts'
export {
  type RebuiltRequest,
  RequestDeriver,
  rebuildRequest,
  reconstructRequests,
  verifyLoopRequest,
} from './derive/reconstruct.ts'
export { RequestFold } from './derive/request-fold.ts'
export { formatViolation, InvariantError, InvariantErrorCode } from './errors.ts'
export { checkedStream } from './grammar/checked-stream.ts'
export { LogGrammar, type LogOrigin } from './grammar/log-grammar.ts'
export { type ModelCall, splitModelCalls } from './grammar/model-calls.ts'
export { describeChunk, StreamGrammar } from './grammar/stream-grammar.ts'
export { checkSessionFile, type FileCheck, type FileViolation } from './offline/check-file.ts'
export { type ScannedLog, type ScanOptions, scanRecordedLog } from './offline/file-scan.ts'
export { type LogCheckCounts, SessionLogChecker } from './offline/log-checker.ts'
export { checkSessionLog } from './offline/offline.ts'
export { eventLine, type RecordedLog, readRecordedLog } from './offline/recorded-log.ts'
export { RequestChecker } from './online/request-checker.ts'
export {
  CHECK_NAMES,
  InvariantRegistry,
  InvariantRegistry as default,
  InvariantRegistry as Invariants,
  observeRegistries,
  resolveChecks,
} from './registry.ts'
export type { CheckName, InvariantCounters, InvariantsConfig, Violation } from './types.ts'
