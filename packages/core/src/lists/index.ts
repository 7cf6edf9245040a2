export { ADDRESS_FIELDS } from './address.js';
export { type FileList, type FileListOptions, fileList, MAX_LIST_BYTES } from './file.js';
export { parseList } from './parse.js';
export { valueList, valueSetInSteps } from './valueList.js';
export { EMPTY_SET, ValueSet, valueSetOf } from './valueSet.js';
