/** Helpers for reading untrusted, JSON-shaped input without tripping over prototypes or getters. */

export type PlainObject = Record<string, unknown>;

export function isPlainObject(value: unknown): value is PlainObject {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Names a value's type the way a Python/DRF API would, so messages read alike across services. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  switch (typeof value) {
    case 'string':
      return 'str';
    case 'number':
      return 'number';
    case 'boolean':
      return 'bool';
    case 'object':
      return isPlainObject(value) ? 'dict' : 'object';
    default:
      return typeof value;
  }
}

/** Stands in for an accessor property; fails every type check, so such input is rejected, not skipped. */
const ACCESSOR: object = Object.freeze(new (class Accessor {})());

/**
 * An own data property's value. Getters are never run: they could throw or answer
 * differently between the check and the copy.
 */
export function ownValue(object: object, key: string): unknown {
  const descriptor = Object.getOwnPropertyDescriptor(object, key);
  if (!descriptor) return undefined;
  return 'value' in descriptor ? descriptor.value : ACCESSOR;
}
