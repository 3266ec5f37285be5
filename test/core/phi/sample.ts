import type { PhiDetectorName } from '../../../src/core/phi/index.ts';

/** Where a sample goes: a JSON body, a query string (name → value or values), or request headers (name → value). */
export type SampleIn = 'body' | 'query' | 'header';

/** PHI that must be found by `detector` at `pointer` (for headers, `/<header name>`). */
export type BlockedSample = {
  readonly name: string;
  readonly in: SampleIn;
  readonly input: unknown;
  readonly detector: PhiDetectorName;
  readonly pointer: string;
};

/** Realistic registry traffic that must pass. */
export type OrdinarySample = {
  readonly name: string;
  readonly in: SampleIn;
  readonly input: unknown;
};
