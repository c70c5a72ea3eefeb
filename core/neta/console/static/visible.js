// Text from a model or a tool, made to read as it is: the bidirectional overrides and
// isolates (U+202A-U+202E, U+2066-U+2069) reorder what a page shows ("Trojan Source":
// `echo "<RLO>" ; touch pwned #` reads as an echo), so they are shown as escapes (`\u202e`),
// as neta.sanitize shows them in an approval's preview.

const REORDERING = /[\u202a-\u202e\u2066-\u2069]/g;

export function visible(text) {
  return String(text).replace(REORDERING, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
