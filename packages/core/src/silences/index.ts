export * from './silence-input';
