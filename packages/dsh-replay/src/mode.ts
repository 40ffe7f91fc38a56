/** Which way the wrapper runs: from the option, else from the `DSH_REPLAY` environment variable. */

/** `replay` plays the fixture; `record` calls the real adapter and writes the fixture anew. */
export type ReplayMode = 'replay' | 'record'

/** The environment variable that switches every replay wrapper without an explicit `mode` to recording. */
export const REPLAY_ENV = 'DSH_REPLAY'

/**
 * The mode to run in: `explicit` when given; else `record` when `DSH_REPLAY=record`, `replay` when it is
 * unset, empty or `replay`. Any other value throws `TypeError` naming it, so a typo never silently replays.
 */
export function resolveMode(explicit: ReplayMode | undefined, env = process.env[REPLAY_ENV]): ReplayMode {
  if (explicit !== undefined) return explicit
  if (env === undefined || env === '' || env === 'replay') return 'replay'
  if (env === 'record') return 'record'
  throw new TypeError(`${REPLAY_ENV} must be "record" or "replay", got ${JSON.stringify(env)}`)
}
