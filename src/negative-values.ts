/**
 * node:util parseArgs refuses `-t -5` ("argument is ambiguous"): it takes the "-5" for an option. For the options
 * listed, a word that reads as a negative number is joined to its flag (`--time=-5`, `-t-5`), so it reaches the
 * range check and the user hears what range the flag takes.
 */
export function negativeValues(argv: readonly string[], valued: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    const next = argv[i + 1];
    if (word === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (next !== undefined && valued.includes(word) && /^-\.?\d/.test(next)) {
      out.push(word.startsWith("--") ? `${word}=${next}` : `${word}${next}`);
      i++;
    } else out.push(word);
  }
  return out;
}

/** The flags of node:util parseArgs options that take a value, in both spellings. */
export function valuedFlags(options: Readonly<Record<string, { type: string; short?: string }>>): string[] {
  return Object.entries(options).flatMap(([name, o]) => (o.type === "string" ? [`--${name}`, ...(o.short ? [`-${o.short}`] : [])] : []));
}
