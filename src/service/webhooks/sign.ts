/**
 * Webhook signatures, on Stripe's model: the header `X-Amsg-Signature: t=<unix
 * seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the webhook's secret>`.
 * The timestamp is signed with the body so a captured post cannot be replayed later
 * unnoticed (a receiver refuses old timestamps); docs/guide/webhooks.md has a verifier.
 */
// node:crypto is loaded on first use: this module is bundled with the engine every local command loads.
const crypto = () => process.getBuiltinModule('node:crypto') as typeof import('node:crypto');

export const SIGNATURE_HEADER = 'x-amsg-signature';
export const EVENT_ID_HEADER = 'x-amsg-event-id';
export const DELIVERY_ID_HEADER = 'x-amsg-delivery-id';
export const EVENT_HEADER = 'x-amsg-event';

export function signature(secret: string, timestamp: number, body: string): string {
  return crypto().createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
}

export function signatureHeader(secret: string, timestamp: number, body: string): string {
  return `t=${timestamp},v1=${signature(secret, timestamp, body)}`;
}

/** Checks a signature header against the raw body (tolerance in seconds; 0 checks no age). */
export function verifySignature(secret: string, header: string, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1) return false;
  if (toleranceSeconds > 0 && Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signature(secret, t, body), 'hex');
  const given = Buffer.from(parts.v1, 'hex');
  return given.length === expected.length && crypto().timingSafeEqual(given, expected);
}
