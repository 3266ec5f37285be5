import iso3166 from 'iso-3166-1';

/** Every officially assigned ISO 3166-1 alpha-2 code, upper-case. */
const ALPHA2_CODES: ReadonlySet<string> = new Set(iso3166.all().map((country) => country.alpha2.toUpperCase()));

/**
 * Normalises a jurisdiction code: accepts either case, returns the upper-case alpha-2 code, or
 * `undefined` when it is not an officially assigned ISO 3166-1 alpha-2 code (so `UK` and `XK` fail).
 */
export function normaliseJurisdiction(input: string): string | undefined {
  const upper = input.trim().toUpperCase();
  return ALPHA2_CODES.has(upper) ? upper : undefined;
}

export function isJurisdiction(input: string): boolean {
  return normaliseJurisdiction(input) !== undefined;
}
