/**
 * The C number parsing both tools rely on, reproduced because their options are read with atoi()/sscanf(): a word
 * like "s" or "5k" must give exactly what the real tool gets (0 and 5), or a copied command changes meaning.
 */

/** atoi(): optional blanks and sign, then leading digits; anything else gives 0. Clamped like glibc's strtol. */
export function atoi(word: string): number {
  const m = /^[\s]*([+-]?\d+)/.exec(word);
  if (!m) return 0;
  const v = Number(m[1]);
  return Math.max(-0x80000000, Math.min(0x7fffffff, v));
}

/** sscanf("%lf%c") then ×unit per k/m/g suffix (ntttcp-for-linux unit_atod). Unparsable → 0. */
export function unitAtod(word: string, unitK: number): number {
  const m = /^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(.?)/.exec(word);
  if (!m) return 0;
  const n = Number(m[1]);
  switch (m[2]) {
    case "g":
    case "G":
      return n * unitK ** 3;
    case "m":
    case "M":
      return n * unitK ** 2;
    case "k":
    case "K":
      return n * unitK;
    default:
      return n;
  }
}

/**
 * Windows NTttcp size words (-l, -n, -rb, -sb): atoi() of the word, multiplied by 1024 for a 'k'/'K' anywhere in it
 * and by 1048576 for an 'm'/'M' anywhere in it (docs/protocols/ntttcp-windows.md §1.2).
 */
export function windowsSize(word: string): number {
  let v = atoi(word);
  if (/[kK]/.test(word)) v *= 1024;
  if (/[mM]/.test(word)) v *= 1048576;
  return v;
}
