/**
 * A POSIX-like word splitter for `--stdio 'command args...'`: the words a shell would pass to
 * the program, without running a shell. Single quotes keep everything literally; double quotes
 * keep everything but `\` before `$`, `` ` ``, `"`, `\` or a newline; a backslash outside quotes
 * escapes the next character (a backslash-newline is removed). Nothing is expanded: `$HOME`,
 * `*` and `~` stay as they are.
 */

export type SplitFailure = "unterminated-quote" | "trailing-backslash"

export type SplitResult =
  | { readonly _tag: "Words"; readonly words: ReadonlyArray<string> }
  | { readonly _tag: "Invalid"; readonly reason: SplitFailure }

const isBlank = (char: string): boolean => char === " " || char === "\t" || char === "\n" || char === "\r"

// Inside double quotes POSIX gives the backslash a meaning only before these characters.
const doubleQuoteEscapable = new Set(["$", "`", "\"", "\\", "\n"])

export const splitWords = (input: string): SplitResult => {
  const words: Array<string> = []
  let word = ""
  // A word exists once anything (even an empty pair of quotes) was seen since the last blank.
  let inWord = false
  let i = 0
  while (i < input.length) {
    const char = input[i]!
    if (isBlank(char)) {
      if (inWord) words.push(word)
      word = ""
      inWord = false
      i++
    } else if (char === "'") {
      const end = input.indexOf("'", i + 1)
      if (end === -1) return { _tag: "Invalid", reason: "unterminated-quote" }
      word += input.slice(i + 1, end)
      inWord = true
      i = end + 1
    } else if (char === "\"") {
      i++
      let closed = false
      while (i < input.length) {
        const inner = input[i]!
        if (inner === "\"") {
          closed = true
          i++
          break
        }
        if (inner === "\\" && i + 1 < input.length && doubleQuoteEscapable.has(input[i + 1]!)) {
          if (input[i + 1] !== "\n") word += input[i + 1]
          i += 2
          continue
        }
        word += inner
        i++
      }
      if (!closed) return { _tag: "Invalid", reason: "unterminated-quote" }
      inWord = true
    } else if (char === "\\") {
      if (i + 1 >= input.length) return { _tag: "Invalid", reason: "trailing-backslash" }
      const next = input[i + 1]!
      // A backslash-newline joins lines and adds nothing.
      if (next !== "\n") {
        word += next
        inWord = true
      }
      i += 2
    } else {
      word += char
      inWord = true
      i++
    }
  }
  if (inWord) words.push(word)
  return { _tag: "Words", words }
}
