export * from './list-query';
export * from './rule-input';
