/** Time zone names, for the calendar quota windows (docs/adr/0043); no imports, so the console can take it. */

/** Whether `timeZone` is a zone this runtime knows (an IANA name such as `Asia/Shanghai`, or `UTC`). */
export function isKnownTimeZone(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
    return true;
  } catch {
    return false;
  }
}
