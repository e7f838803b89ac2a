/** A mustache token as mustache's parser makes it: [type, value, start, end, children?, ...]. */
export type Token = [string, string, number, number, Token[]?, ...unknown[]];

/** Fills a compiled template for the views on `stack` (the innermost last). */
type Part = (stack: unknown[]) => string;

/** A compiled template: the view in, the text out. */
export type CompiledTemplate = (view: unknown) => string;

function hasProperty(object: unknown, name: string): boolean {
  return object != null && typeof object === 'object' && name in object;
}

function primitiveHasOwnProperty(value: unknown, name: string): boolean {
  return value != null && typeof value !== 'object' && Object.prototype.hasOwnProperty.call(value, name);
}

/**
 * Mustache's lookup (Context.lookup of mustache 4): the innermost view that has the name gives its
 * value; a dotted name descends from each view in turn, and counts as found when the last step's
 * object (or primitive, such as an array's length) has the property.
 */
function lookup(stack: unknown[], name: string, path: readonly string[] | null): unknown {
  const innermost = stack[stack.length - 1];
  if (name === '.') return innermost;
  let value: unknown;
  for (let i = stack.length - 1; i >= 0; i--) {
    const view = stack[i];
    if (path === null) {
      if (hasProperty(view, name)) {
        value = (view as Record<string, unknown>)[name];
        break;
      }
      continue;
    }
    let step: unknown = view;
    let hit = false;
    for (let k = 0; step != null && k < path.length; k++) {
      if (k === path.length - 1) hit = hasProperty(step, path[k]!) || primitiveHasOwnProperty(step, path[k]!);
      step = (step as Record<string, unknown>)[path[k]!];
    }
    if (hit) {
      value = step;
      break;
    }
  }
  return typeof value === 'function' ? (value as (this: unknown) => unknown).call(innermost) : value;
}

function compileParts(tokens: readonly Token[], escape: (value: unknown) => string): Part[] {
  const parts: Part[] = [];
  for (const token of tokens) {
    const [type, name] = token;
    const path = name.indexOf('.') > 0 ? name.split('.') : null;
    switch (type) {
      case 'text':
        parts.push(() => name);
        break;
      case 'name':
        parts.push((stack) => {
          const value = lookup(stack, name, path);
          return value == null ? '' : escape(value);
        });
        break;
      case '&':
        parts.push((stack) => {
          const value = lookup(stack, name, path);
          return value == null ? '' : String(value);
        });
        break;
      case '#': {
        const inner = compileParts(token[4] ?? [], escape);
        parts.push((stack) => {
          const value = lookup(stack, name, path);
          if (!value) return '';
          if (typeof value === 'function') throw new Error(`mustache: higher-order section {{#${name}}} is not supported`);
          if (Array.isArray(value)) {
            let out = '';
            for (const item of value) {
              stack.push(item);
              out += fill(inner, stack);
              stack.pop();
            }
            return out;
          }
          if (typeof value === 'object' || typeof value === 'string' || typeof value === 'number') {
            stack.push(value);
            const out = fill(inner, stack);
            stack.pop();
            return out;
          }
          return fill(inner, stack);
        });
        break;
      }
      case '^': {
        const inner = compileParts(token[4] ?? [], escape);
        parts.push((stack) => {
          const value = lookup(stack, name, path);
          return !value || (Array.isArray(value) && value.length === 0) ? fill(inner, stack) : '';
        });
        break;
      }
      case '>':
        throw new Error(`mustache: partial {{>${name}}} is not supported`);
      default:
        // Comments ('!') and delimiter changes ('=') write nothing.
        break;
    }
  }
  return parts;
}

function fill(parts: readonly Part[], stack: unknown[]): string {
  let out = '';
  for (const part of parts) out += part(stack);
  return out;
}

/**
 * Compiles parsed mustache tokens (Mustache.Writer#parse) into closures, once: filling them writes
 * what mustache's renderTokens writes for the same tokens and view (held to it by a property test
 * over our templates), without its interpreter's work per message: a context object per section
 * item, and a lookup that splits and caches every name again in each (most of the time spent
 * filling templates in a wave of digests: see commit 213db2f). Partials and higher-order sections
 * are not supported.
 */
export function compileTokens(tokens: readonly Token[], escape: (value: unknown) => string): CompiledTemplate {
  const parts = compileParts(tokens, escape);
  return (view) => fill(parts, [view]);
}
