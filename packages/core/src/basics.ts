/**
 * Core's modules that import nothing, behind a door of their own (`@notify/core/basics`) besides
 * the package's front door, which re-exports them. For code that must load fast and small: a
 * compose thread of @notify/mail. Through the front door a thread also loaded the validation's
 * typebox and ajv: it started in 0.43–0.57 s of CPU and 40–42 MB, against 0.13–0.15 s and 23–24 MB
 * (the built code, one process, alternated).
 */
export * from './scopes';
export * from './errors';
export { hasControlCharacter } from './text';
export * from './ids';
export * from './email';
