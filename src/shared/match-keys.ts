// The full metadata: a number is valid by its country's patterns (a Brazilian landline begins 2–5),
// not only by its length, so a mistyped one matches none rather than a stranger's.
import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** The country a tenant's phones are read in when they carry no +code (SPEC §21). */
export const DEFAULT_PHONE_COUNTRY = 'BR';

/** Mailboxes where dots in the local part do not count, and the one domain both names mean. */
const DOTLESS_DOMAINS: Readonly<Record<string, string>> = { 'gmail.com': 'gmail.com', 'googlemail.com': 'gmail.com' };

/**
 * An e-mail as duplicates are matched on (SPEC §21): trimmed, lower-cased, without a `+tag`, and
 * for Gmail without dots in the local part and with one domain name. `Ana.Souza+crm@GoogleMail.com`
 * and `anasouza@gmail.com` are one person. Null when there is no address.
 */
export function matchEmail(email: string | null | undefined): string | null {
  const text = email?.trim().toLowerCase();
  if (!text) return null;
  const at = text.lastIndexOf('@');
  if (at <= 0) return text;
  let local = text.slice(0, at);
  let domain = text.slice(at + 1);
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  const dotless = DOTLESS_DOMAINS[domain];
  if (dotless) {
    local = local.replaceAll('.', '');
    domain = dotless;
  }
  return `${local}@${domain}`;
}

/**
 * A phone as duplicates are matched on (SPEC §21): E.164 (`+5511987654321`), read with `country`
 * when it has no +code; null when it is no valid number (it is kept as written, and matches none).
 */
export function matchPhone(phone: string | null | undefined, country: string): string | null {
  if (!phone) return null;
  const parsed = parsePhoneNumberFromString(phone, country as CountryCode);
  return parsed?.isValid() ? parsed.number : null;
}

/** Whether `country` is an ISO 3166-1 alpha-2 code whose phones can be read. */
export function isPhoneCountry(country: string): boolean {
  return /^[A-Z]{2}$/.test(country) && isSupportedCountry(country);
}
