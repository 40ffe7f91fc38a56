export { contractEvent, contractEvents, contractHeader } from './contract-events.ts'
export type {
  ContractOpenOptions,
  StorageContractBacking,
  StorageContractFactory,
  StorageContractPowers,
} from './contract-types.ts'
export { describeStorageContract } from './storage-contract.ts'
