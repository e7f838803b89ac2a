/**
 * A set of condition values compared the condition language's way: strings
 * case-insensitively, everything else by strict equality (the number 3389 is not "3389").
 */
export class ValueSet {
  private readonly strings = new Set<string>();
  private readonly others = new Set<unknown>();

  constructor(values: Iterable<unknown> = []) {
    for (const value of values) this.add(value);
  }

  add(value: unknown): void {
    if (typeof value === 'string') this.strings.add(value.toLowerCase());
    else this.others.add(value);
  }

  has(value: unknown): boolean {
    return typeof value === 'string' ? this.strings.has(value.toLowerCase()) : this.others.has(value);
  }

  /** True when every member of `this` is in `other`. */
  isSubsetOf(other: ValueSet): boolean {
    for (const s of this.strings) if (!other.strings.has(s)) return false;
    for (const o of this.others) if (!other.others.has(o)) return false;
    return true;
  }
}
