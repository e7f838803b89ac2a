const REGEX_SYNTAX = /[\\^$.*+?()[\]{}|/]/g;

function literal(segment: string): string {
  return segment
    .split('?')
    .map((part) => part.replace(REGEX_SYNTAX, '\\$&'))
    .join('.');
}

/**
 * Compiles a `*`/`?` pattern into an anchored, case-insensitive RegExp; every other
 * character is literal.
 *
 * The naive `^a.*b.*c$` backtracks polynomially (degree = number of stars) on a miss,
 * so a rule like `*a*a*a*a*a*a*b` could stall matching for every event. Instead each
 * inner segment is found at its leftmost position inside a lookahead and consumed by a
 * backreference; lookaheads are atomic, so nothing before the final `.*tail$` is ever
 * retried and a test stays O(text × pattern). Leftmost placement is always safe for
 * globs: a later placement only leaves less text for the remaining segments.
 */
export function wildcardToRegExp(pattern: string): RegExp {
  const segments = pattern.split(/\*+/).map(literal);
  if (segments.length === 1) return new RegExp(`^${segments[0]}$`, 'si');
  const head = segments[0] ?? '';
  const tail = segments[segments.length - 1] ?? '';
  const inner = segments
    .slice(1, -1)
    .map((segment, i) => `(?=(.*?${segment}))\\${i + 1}`)
    .join('');
  return new RegExp(`^${head}${inner}.*${tail}$`, 'si');
}
