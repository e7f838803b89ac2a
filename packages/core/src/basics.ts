/**
 * Core's modules that import nothing, behind a door of their own (`@notify/core/basics`) besides
 * the package's front door, which re-exports them. For code that must load fast and small: a
 * compose thread of @notify/mail. Through the front door a thread also loaded the validation's
 * typebox and ajv, and started several times slower and with much more memory (measured: see
 * commit 8470758).
 */
export * from './scopes';
export * from './errors';
export { hasControlCharacter } from './text';
export * from './ids';
export * from './email';
