/** Checks of plain records given by callers, shared by the modules that validate options. */

/** A plain object (not an array) whose values are all strings: an environment, a prompt's arguments. */
export const isStringRecord = (u: unknown): u is Record<string, string> =>
  typeof u === "object" && u !== null && !Array.isArray(u) && Object.values(u).every((v) => typeof v === "string")
