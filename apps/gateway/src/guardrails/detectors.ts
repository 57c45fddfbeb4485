import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js/max";
import { electronicFormatIBAN, isValidIBAN } from "ibantools";
import { isIPv6 } from "node:net";

/**
 * The offline detectors of the guardrails (docs/guardrails.md): each finds the spans of one
 * category in a text. Phone numbers are found by libphonenumber-js (its metadata validates each
 * number for its region) and IBANs checked by ibantools; the other categories are patterns with a
 * checksum where the identifier has one (Luhn for cards, mod 97 for IBANs and French NIRs, the
 * check letter of Spanish DNIs). decisions/0023-guardrail-detectors.md says why these.
 */
export const CATEGORIES = ["email", "phone", "card", "iban", "ip", "secret", "national_id"] as const;
export type Category = (typeof CATEGORIES)[number];

/** One value found: where it is in the text and what it is. */
export interface Span {
  start: number;
  end: number;
  /** A category, or a custom pattern's label, or `word` for a configured word. */
  label: string;
}

/** Adds every match of `re` (a global regex) that `accept` takes, as spans of `label`. */
function scan(text: string, re: RegExp, label: string, out: Span[], accept: (m: string) => boolean = () => true) {
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    if (m[0].length === 0) {
      re.lastIndex++;
      continue;
    }
    if (accept(m[0])) out.push({ start: m.index, end: m.index + m[0].length, label });
  }
}

const EMAIL =
  /[\p{L}\p{N}._%+-]+(?:'[\p{L}\p{N}._%+-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}{2,}/gu;

/** The Luhn checksum of a card number's digits. */
export function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}
// 13 to 19 digits, in groups separated by single spaces or hyphens, not inside a longer number.
const CARD = /(?<![\d.-])\d(?:[ -]?\d){12,18}(?![\d-])/g;
const cardOk = (m: string) => {
  const digits = m.replace(/[ -]/g, "");
  // The issuer ranges in use start with 2 to 6 (card networks' IIN ranges).
  return digits.length >= 13 && digits.length <= 19 && /^[2-6]/.test(digits) && luhn(digits);
};

const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g;
const ibanOk = (m: string) => isValidIBAN(electronicFormatIBAN(m) ?? "");

const IPV4 = /(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?!\d|\.\d)/g;
const IPV6 = /(?<![\w:])(?:[0-9A-Fa-f]{0,4}:){2,7}[0-9A-Fa-f]{0,4}(?![\w:])/g;
// "::" alone is not worth a placeholder: at least two groups of hex digits.
const ipv6Ok = (m: string) => isIPv6(m) && (m.match(/[0-9A-Fa-f]+/g)?.length ?? 0) >= 2;

/** Credentials by their issuers' published prefixes and shapes. */
const SECRETS: RegExp[] = [
  /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----/g,
  // Messages- and chat-protocol vendors' keys and this gateway's own (sk-tp-…, sk-admin-…).
  /\bsk-[A-Za-z0-9_-]{20,}/g,
  /\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b/g,
  /\bAIza[0-9A-Za-z_-]{35}\b/g,
  /\bgh[pousr]_[A-Za-z0-9]{36,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}\b/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g,
  /\b[rs]k_live_[0-9A-Za-z]{20,}\b/g,
  /\bglpat-[A-Za-z0-9_-]{20,}\b/g,
  // A JSON Web Token: three base64url parts, the first two JSON objects.
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g,
];

const SSN = /\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b/g;
const NINO = /\b[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D]\b/g;
const DNI = /\b\d{8}-?[A-HJ-NP-TV-Z]\b/g;
const dniOk = (m: string) => {
  const n = Number(m.slice(0, 8));
  return "TRWAGMYFPDXBNJZSQVHLCKE"[n % 23] === m.at(-1);
};
const NIR = /\b[12] ?\d{2} ?(?:0[1-9]|1[0-2]|[2-9]\d) ?(?:\d{2}|2[AB]) ?\d{3} ?\d{3} ?\d{2}\b/g;
const nirOk = (m: string) => {
  const s = m.replace(/ /g, "").replace("2A", "19").replace("2B", "18");
  const body = BigInt(s.slice(0, 13));
  return 97n - (body % 97n) === BigInt(s.slice(13));
};

/** The regions whose national phone formats are understood (numbers in +… form are found for every region). */
export const DEFAULT_PHONE_REGIONS: readonly CountryCode[] = ["US", "GB", "DE", "FR"];

/** A calendar date (2026-11-28, 28.11.2026) is not a phone number, whatever a region's number plan allows. */
const ISO_DATE = /^(?:\d{4}-\d{2}-\d{2}|\d{2}[./-]\d{2}[./-]\d{4})$/;

/**
 * How a number is written to be dialled: in international form (+…), with a trunk prefix (0…) or
 * an area code in brackets, or as a North American number (3, 3 and 4 digits). Other runs of
 * digits (an invoice number "2024-0815", a date and hour "2026-11-28 10") are left alone, whatever
 * a region's plan would allow.
 */
function dialled(m: string): boolean {
  if (/^[+0(]/.test(m)) return true;
  return /^(?:1[ .-]?)?\d{3}[ .-]?\d{3}[ .-]?\d{4}$/.test(m);
}

/**
 * Runs of digits written as a phone number could be (a `+` or a bracket first, digits with spaces,
 * dots, dashes or brackets between): libphonenumber-js reads only these, not the whole text — on a
 * whole prompt it cost about 2 ms per KB with four regions; on the runs, a few µs.
 */
const PHONE_RUN = /[+(]?\d[\d \t()./-]{4,22}\d/g;

function phones(text: string, regions: readonly CountryCode[], out: Span[]) {
  PHONE_RUN.lastIndex = 0;
  for (let m = PHONE_RUN.exec(text); m; m = PHONE_RUN.exec(text)) {
    // A run ends at a digit; a bracket that opens it but is not closed in it is not part of it.
    let run = m[0];
    let at = m.index;
    if (run.startsWith("(") && !run.includes(")")) {
      run = run.slice(1);
      at++;
    }
    // Six digits at least (nothing shorter is a number anyone dials), and written to be dialled.
    if (run.replace(/\D/g, "").length < 6 || ISO_DATE.test(run) || !dialled(run)) continue;
    // A run another detector already took (a card, an IBAN, an address) is not read again.
    const end = at + run.length;
    if (out.some((o) => o.start < end && at < o.end)) continue;
    // International form names its own region; otherwise the first configured region whose plan it fits.
    const valid = run.startsWith("+")
      ? parsePhoneNumberFromString(run)?.isValid()
      : regions.some((r) => parsePhoneNumberFromString(run, r)?.isValid());
    if (valid) out.push({ start: at, end: at + run.length, label: "phone" });
  }
}

/** What one policy looks for. */
export interface DetectorSet {
  categories: ReadonlySet<Category>;
  /** Custom patterns by label (global regexes). */
  patterns: ReadonlyArray<readonly [string, RegExp]>;
  /** Configured words and phrases, matched whole and case-insensitively (one regex). */
  words: RegExp | undefined;
  phoneRegions: readonly CountryCode[];
}

/**
 * Every value of the set's categories in `text`, in order, overlaps resolved: the earlier span
 * wins, and of two starting together the longer (a card number is not also a phone number).
 */
export function detect(text: string, set: DetectorSet): Span[] {
  const found: Span[] = [];
  const c = set.categories;
  if (c.has("secret")) for (const re of SECRETS) scan(text, re, "secret", found);
  if (c.has("email") && text.includes("@")) scan(text, EMAIL, "email", found);
  if (c.has("card")) scan(text, CARD, "card", found, cardOk);
  if (c.has("iban")) scan(text, IBAN, "iban", found, ibanOk);
  if (c.has("national_id")) {
    scan(text, SSN, "national_id", found);
    scan(text, NINO, "national_id", found);
    scan(text, DNI, "national_id", found, dniOk);
    scan(text, NIR, "national_id", found, nirOk);
  }
  if (c.has("ip")) {
    scan(text, IPV4, "ip", found);
    if (text.includes(":")) scan(text, IPV6, "ip", found, ipv6Ok);
  }
  if (c.has("phone")) phones(text, set.phoneRegions, found);
  for (const [label, re] of set.patterns) scan(text, re, label, found);
  if (set.words) scan(text, set.words, "word", found);
  if (found.length < 2) return found;
  found.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Span[] = [];
  let end = -1;
  for (const s of found) {
    if (s.start < end) continue;
    kept.push(s);
    end = s.end;
  }
  return kept;
}

/** The regex of a word list: each entry matched whole, case-insensitively. */
export function wordsRegex(words: readonly string[]): RegExp | undefined {
  if (!words.length) return undefined;
  const escaped = words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  return new RegExp(`(?<![\\p{L}\\p{N}])(?:${escaped.join("|")})(?![\\p{L}\\p{N}])`, "giu");
}
