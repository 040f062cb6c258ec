/**
 * Response bodies as JSON text. A route may answer JSON it wrote itself (RawJson), or
 * a list of it, which is then sent as it is instead of being built as objects and
 * written again: a page of members is the case (api/encode.ts, memberJson). Every face
 * turns a body into text here: the server to send it, the local transport and the
 * tests' service to read it back as the wire has it.
 */
export class RawJson {
  constructor(readonly text: string) {}
  /** Written inside another value (not as a body or an item of one): as the value it is. */
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** A response body as JSON text. */
export function jsonText(body: unknown): string {
  if (body instanceof RawJson) return body.text;
  if (Array.isArray(body) && body[0] instanceof RawJson) {
    let text = '[';
    for (let i = 0; i < body.length; i++) {
      const item: unknown = body[i];
      text += (i ? ',' : '') + (item instanceof RawJson ? item.text : JSON.stringify(item));
    }
    return `${text}]`;
  }
  return JSON.stringify(body);
}
