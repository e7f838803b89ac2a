/**
 * Whether `text` holds a control character: C0 (U+0000-U+001F), DEL, C1 (U+0080-U+009F), or a
 * Unicode line or paragraph separator (U+2028, U+2029), anything that could end a header line or a
 * one-line field. `multiline` lets tab, LF, CR and the two separators through.
 */
export function hasControlCharacter(text: string, options: { multiline?: boolean } = {}): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0x2028 || code === 0x2029;
    if (!control) continue;
    if (options.multiline && (code === 0x09 || code === 0x0a || code === 0x0d || code === 0x2028 || code === 0x2029)) continue;
    return true;
  }
  return false;
}
