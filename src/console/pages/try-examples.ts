/**
 * An example test message for each shipped agent (issue 46), filled into the try page's send form
 * so a first send completes instead of ending in `input-required`: triage needs a complaint and vital
 * signs, consent one action as a data part; the avatar takes no tasks, which the page says instead. Nothing here is patient data (a reference, not a person).
 */
export type TryExample = { message: string; data: string; note: string };

export const TRY_EXAMPLES: Readonly<Record<string, TryExample>> = {
  triage: {
    message: 'chest pain',
    data: JSON.stringify({ vital_signs: { heart_rate: 118, respiratory_rate: 22, oxygen_saturation: 94, systolic_bp: 105, consciousness: 'alert', temperature_c: 37.2 } }),
    note: 'a chief complaint as text and the vital signs as data: triage completes with an urgency and a NEWS2 score',
  },
  consent: {
    message: 'Check consent for treatment',
    data: JSON.stringify({ action: 'check', requester: 'did:web:localhost:agents:ward-console', patient_ref: 'Patient/example-1', purpose: 'treatment' }),
    note: 'one action as data (grant, check or revoke): a check completes with whether consent is in force',
  },
  // No example to fill in: the avatar answers its own avatar/* methods and page, and no tasks.
  clinician_avatar: {
    message: '',
    data: '',
    note: 'it takes no tasks (tasks/send answers "Method not found"): hold a consultation on its own page, /rpc/clinician_avatar/avatar at the gateway, linked from Mesh',
  },
};

/** The example for an alias, when it has one. */
export const tryExampleFor = (alias: string | undefined): TryExample | undefined => (alias === undefined ? undefined : TRY_EXAMPLES[alias]);
