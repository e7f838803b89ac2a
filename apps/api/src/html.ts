/** Text for an HTML page or attribute: the five characters that could open markup, as entities. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}
