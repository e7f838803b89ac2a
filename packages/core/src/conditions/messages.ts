import { SEVERITIES } from '../scopes';
import { CONDITION_LIMITS } from './types';

/** Wording follows Django REST Framework so clients can handle both APIs the same way. */
export const MESSAGES = {
  required: 'This field is required.',
  notNull: 'This field may not be null.',
  blank: 'This field may not be blank.',
  string: 'A valid string is required.',
  number: 'A valid number is required.',
  boolean: 'Must be a valid boolean.',
  scalar: 'A valid string, number or boolean is required.',
  stringOrNumber: 'A valid string or number is required.',
  nullCharacter: 'Null characters are not allowed.',
  tooLong: `Ensure this field has no more than ${CONDITION_LIMITS.maxStringLength} characters.`,
  emptyList: 'This list may not be empty.',
  datetime:
    'Datetime has wrong format. Use one of these formats instead: YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z].',
  unknownClause: 'Unknown clause. Use must, should or must_not.',
  unknownConditionKey: 'Unknown key. Use name, type or value.',
  dict: (type: string) => `Expected a dictionary of items but got type "${type}".`,
  list: (type: string) => `Expected a list of items but got type "${type}".`,
  maxItems: (limit: number) => `Ensure this field has no more than ${limit} elements.`,
  choice: (value: string) => `"${value}" is not a valid choice.`,
  severity: (value: string) => `"${value}" is not a valid severity. Use one of: ${SEVERITIES.join(', ')}.`,
  tooCostly: (cost: number, limit: number) =>
    `Ensure this strategy costs no more than ${limit} to evaluate (it costs ${cost}): use fewer conditions, or fewer "*" in wildcards, on tags and data fields.`,
  operatorOnField: (operator: string, name: string) => `"${operator}" cannot be used on field "${name}".`,
} as const;
