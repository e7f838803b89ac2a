export * from './scopes';
export * from './conditions';
export * from './schedule';
