// The shared vectors and their runner are published in @sluice/core/testing (the files in packages/core/vectors);
// the policy and refund vectors beside this file build on them.
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
} from '@sluice/core/testing';
