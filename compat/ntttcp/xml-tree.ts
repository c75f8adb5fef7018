import { XMLBuilder, XMLParser } from "fast-xml-parser";

/** Ordered XML nodes in fast-xml-parser's preserveOrder shape, so repeated names keep the tools' element order. */
export type XmlNode = { [name: string]: XmlNode[] | string | Record<string, string> } | { "#text": string };

export function el(name: string, content: string | XmlNode[], attrs?: Record<string, string>): XmlNode {
  const node: Record<string, XmlNode[] | Record<string, string>> = {
    [name]: typeof content === "string" ? [{ "#text": content }] : content,
  };
  if (attrs) node[":@"] = Object.fromEntries(Object.entries(attrs).map(([k, v]) => [`@_${k}`, v]));
  return node as XmlNode;
}

const builder = new XMLBuilder({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: "@_",
  format: true,
  indentBy: "\t",
  suppressEmptyNode: false,
});

/** One root element, TAB-indented, ending in a newline (both tools' layout). */
export function buildXml(root: XmlNode): string {
  return `${builder.build([root]).replace(/^\n/, "")}\n`;
}

const parser = new XMLParser({ preserveOrder: true, ignoreAttributes: false, attributeNamePrefix: "@_", parseTagValue: false, trimValues: true });

/** Flat view for tests and for reading files back: [path, attrs, text] per leaf element, in document order. */
export function xmlLeaves(xml: string): { path: string; attrs: Record<string, string>; text: string }[] {
  const out: { path: string; attrs: Record<string, string>; text: string }[] = [];
  const walk = (nodes: unknown[], prefix: string) => {
    for (const n of nodes as Record<string, unknown>[]) {
      const attrs = Object.fromEntries(Object.entries((n[":@"] as Record<string, string>) ?? {}).map(([k, v]) => [k.replace(/^@_/, ""), v]));
      for (const [k, v] of Object.entries(n)) {
        if (k === ":@" || k === "#text") continue;
        const kids = v as Record<string, unknown>[];
        const path = prefix ? `${prefix}/${k}` : k;
        if (kids.length === 1 && "#text" in kids[0]!) out.push({ path, attrs, text: String(kids[0]!["#text"]) });
        else if (kids.length === 0) out.push({ path, attrs, text: "" });
        else walk(kids, path);
      }
    }
  };
  walk(parser.parse(xml) as unknown[], "");
  return out;
}
