export { describeStoreContract, type StoreFactory } from './storeContract.js';
export type { Expectation, TestApi } from './testApi.js';
export {
  compareStep,
  loadVectors,
  type Mismatch,
  paramsOf,
  runVectorCase,
  type StepAnswer,
  type StoredVectorCase,
  type VectorCase,
  type VectorExpect,
  type VectorFile,
  type VectorStep,
} from './vectors.js';
