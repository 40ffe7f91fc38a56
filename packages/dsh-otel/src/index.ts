export { Dsh, GenAi, Operation } from './attributes.ts'
export { Telemetry, Telemetry as default, type TelemetryConfig } from './plugin.ts'
