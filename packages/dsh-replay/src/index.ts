export { type RecordReplayAdapter, type RecordReplayOptions, recordReplay } from './adapter.ts'
export { type CanonicalRequest, canonicalJson, canonicalRequest, type Json, requestKey } from './canonical.ts'
export { type Difference, formatDifference, jsonDifferences } from './diff.ts'
export {
  type NearestExchange,
  ReplayErrorCode,
  ReplayFixtureError,
  ReplayMissError,
} from './errors.ts'
export { type Exchange, FIXTURE_FORMAT, type Fixture, readFixture, writeFixture } from './fixture.ts'
export { REPLAY_ENV, type ReplayMode, resolveMode } from './mode.ts'
