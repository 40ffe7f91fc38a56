export { DRAIN_CAUSE, interruptedNote, wasDrainedMidTurn } from './handover.ts'
export { FleetHost, type FleetHostEvent, type FleetHostOptions } from './host.ts'
