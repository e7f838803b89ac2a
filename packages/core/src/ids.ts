const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Any RFC 4122 textual UUID (case-insensitive); ids we mint are v4. */
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
