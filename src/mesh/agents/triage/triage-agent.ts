import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { assertConsent, type ConsentChecker } from '../../runtime/consent-requirement.ts';
import type { MeshAgent } from '../../runtime/mesh-agent.ts';
import { isMeshRpcError } from '../../runtime/mesh-errors.ts';
import type { TaskExecutor } from '../../runtime/tasks/task-executor.ts';
import type { MeshMessage } from '../../runtime/tasks/task-types.ts';
import { assessTriage } from './triage-rules.ts';
import { TRIAGE_AGENT_INFO } from './triage-info.ts';

const VitalSigns = Type.Object(
  {
    respiratory_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    oxygen_saturation: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })),
    supplemental_oxygen: Type.Optional(Type.Boolean()),
    systolic_bp: Type.Optional(Type.Number({ minimum: 0, maximum: 350 })),
    heart_rate: Type.Optional(Type.Number({ minimum: 0, maximum: 350 })),
    consciousness: Type.Optional(Type.Union(['alert', 'confused', 'voice', 'pain', 'unresponsive'].map((value) => Type.Literal(value)))),
    temperature_c: Type.Optional(Type.Number({ minimum: 20, maximum: 45 })),
  },
  { additionalProperties: false },
);

/** `triage/assess`. With `patient_ref` the assessment concerns a known patient and needs consent. */
export const TriageAssessParams = Type.Object({
  chief_complaint: Type.String({ minLength: 1, maxLength: 1000 }),
  vital_signs: Type.Optional(VitalSigns),
  patient_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:/-]+$' })),
});
type AssessParams = Static<typeof TriageAssessParams>;

/** Everything the caller said so far: data parts merge (later wins), a plain text is the complaint. */
export function triageInputFrom(history: readonly MeshMessage[]): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  for (const message of history.filter((entry) => entry.role === 'user')) {
    for (const part of message.parts) {
      // Triage declares text and JSON only: the runtime refuses file parts before they get here.
      if (part.kind === 'file') continue;
      if (part.kind === 'data') Object.assign(input, part.data);
      else if (part.text.trim().startsWith('{')) {
        try {
          Object.assign(input, JSON.parse(part.text));
        } catch {
          input.chief_complaint = part.text;
        }
      } else input.chief_complaint = part.text.trim();
    }
  }
  return input;
}

/**
 * A triage task may take several turns: without a complaint or without vital signs it asks for them
 * (input-required); then it assesses and completes with the assessment as a data artifact.
 */
function triageExecutor(consent: ConsentChecker): TaskExecutor {
  return async ({ task, call }) => {
    const input = triageInputFrom(task.history);
    if (typeof input.chief_complaint !== 'string' || input.chief_complaint === '') {
      return { state: 'input-required', message: 'What is the chief complaint?' };
    }
    if (input.vital_signs === undefined) {
      return {
        state: 'input-required',
        message: 'Please send vital signs as a data part {vital_signs: {respiratory_rate, oxygen_saturation, systolic_bp, heart_rate, consciousness, temperature_c}}.',
      };
    }
    if (!Value.Check(TriageAssessParams, input)) return { state: 'failed', message: 'The triage input is not valid.' };
    if (input.patient_ref !== undefined) {
      try {
        await assertConsent(consent, { patient_ref: input.patient_ref, purpose: 'treatment' }, call);
      } catch (error) {
        if (isMeshRpcError(error)) return { state: 'failed', message: [{ kind: 'data', data: { error: error.toErrorObject() } }] };
        throw error;
      }
    }
    const assessment = assessTriage(input);
    return {
      state: 'completed',
      message: `Urgency: ${assessment.urgency}. ${assessment.recommended_action}`,
      artifacts: [{ name: 'triage-assessment', parts: [{ kind: 'data', data: assessment }] }],
    };
  };
}

/** The triage agent (contract §10): `triage/assess`, skill `triage.assess`, rules in triage-rules.ts. */
export function createTriageAgent(context: { consent: ConsentChecker }): MeshAgent {
  return {
    info: TRIAGE_AGENT_INFO,
    methods: {
      'triage/assess': {
        description: 'Urgency from a chief complaint and vital signs; with patient_ref, consent (treatment) is required.',
        params: TriageAssessParams,
        consent: { patientRef: (params: AssessParams) => params.patient_ref, purpose: () => 'treatment' },
        handle: (params: AssessParams) => assessTriage(params),
      },
    },
    executeTask: triageExecutor(context.consent),
  };
}
