/**
 * `dsh-invariants/vitest-setup`: list it in a vitest project's `test.setupFiles` to install the
 * invariant guard in every test file of that project (see `installInvariantGuard`).
 */
import { installInvariantGuard } from './vitest.ts'

installInvariantGuard()
