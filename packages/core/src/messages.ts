/**
 * Validation messages in the wording users of Django REST Framework know
 * (product decisions §1). Every validator takes its text from here.
 */
export const messages = {
  required: 'This field is required.',
  notNull: 'This field may not be null.',
  notBlank: 'This field may not be blank.',
  boolean: 'Must be a valid boolean.',
  integer: 'A valid integer is required.',
  string: 'Not a valid string.',
  min: (limit: number) => `Ensure this value is greater than or equal to ${limit}.`,
  max: (limit: number) => `Ensure this value is less than or equal to ${limit}.`,
  maxLength: (limit: number) => `Ensure this field has no more than ${limit} characters.`,
  // Only a scalar is echoed: String() of a list joins it recursively, and a list nested 10,000 deep
  // overflowed the stack while the 400 was being written (test/faults/abuse-limits.test.ts).
  choice: (value: unknown) => `"${value !== null && typeof value === 'object' ? jsonTypeName(value) : String(value)}" is not a valid choice.`,
  emptyList: 'This list may not be empty.',
  list: (type: string) => `Expected a list of items but got type "${type}".`,
  maxItems: (limit: number) => `Ensure this field has no more than ${limit} elements.`,
  uuid: 'Must be a valid UUID.',
  nullCharacter: 'Null characters are not allowed.',
  datetime: 'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
  email: 'Enter a valid email address.',
  /** DRF's URLField. */
  url: 'Enter a valid URL.',
  unknownMember: (id: string) => `Invalid pk "${id}" - object does not exist.`,
  notRuleMember: (id: string) => `"${id}" is not a member of this notification rule.`,
  unsubscribedMember: (id: string) => `"${id}" has unsubscribed from this notification rule.`,
  noSubscribedMembers: 'The notification rule has no subscribed member to send to.',
  immutable: 'This field cannot be changed.',
  object: (type: string) => `Invalid data. Expected a dictionary, but got ${type}.`,
  timezone: (value: string) => `"${value}" is not a valid time zone. Use an IANA name such as "Europe/Berlin".`,
} as const;

/** The JSON type name of a value, as Python would print it in the messages above. */
export function jsonTypeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'list';
  if (typeof value === 'string') return 'str';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int' : 'float';
  if (typeof value === 'boolean') return 'bool';
  return 'dict';
}
