export { contractEvent, contractEvents, contractHeader } from './contract-events.ts'
export type {
  ContractFaults,
  ContractOpenOptions,
  StorageContractBacking,
  StorageContractFactory,
  StorageContractPowers,
} from './contract-types.ts'
export { describeStorageContract } from './storage-contract.ts'
