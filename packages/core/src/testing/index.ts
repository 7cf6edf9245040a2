export { describeStoreContract, type Expectation, type StoreFactory, type TestApi } from './storeContract.js';
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
