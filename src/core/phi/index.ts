/** PHI guard: scan request bodies and queries before anything else touches them (contract: PHI_DETECTED). */
export { PHI_DETECTOR_NAMES, isValidNhsNumber, type PhiDetectorName } from './detectors.ts';
export {
  DEFAULT_MAX_DEPTH,
  DEFAULT_MAX_FINDINGS,
  scanForPhi,
  scanQueryForPhi,
  scanTextForPhi,
  type PhiFinding,
  type PhiScanOptions,
} from './scan.ts';
export { scanHeadersForPhi } from './headers.ts';
