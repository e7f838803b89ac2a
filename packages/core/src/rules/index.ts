export * from './list-query';
export * from './rule-input';
export * from './preview-query';
