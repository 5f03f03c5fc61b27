/**
 * Characters that hide or reorder what a text reads as: every control (Cc) and format character
 * (Cf: zero-width characters, bidi marks and overrides, the soft hyphen, the tag characters that
 * carry hidden ASCII), and the line and paragraph separators. A client's name, shown on the
 * consent page and in the console, is refused with one (auth/clients.ts); a caller's text shown
 * as it came (a tool name in the audit log) gets them as escapes.
 */
export const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

/** Why a name with one is refused, in the words every refusal of a name uses. */
export const UNSHOWABLE_RULE = 'must not contain control or format characters (such as zero-width or bidirectional marks)';

const EVERY_UNSHOWABLE = new RegExp(UNSHOWABLE.source, 'gu');

/** `text` as it reads, each unshowable character written as its escape (`\u{202E}`). */
export function escapeUnshowable(text: string): string {
  return text.replace(EVERY_UNSHOWABLE, (c) => `\\u{${c.codePointAt(0)!.toString(16).toUpperCase()}}`);
}
