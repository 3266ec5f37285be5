/** The avatar's JSON-RPC params (contract §10), checked by the runtime before anything runs (-32602). */
import { Type, type Static } from 'typebox';
import { URGENCIES } from './frameworks.ts';


export const GENDERS = ['female', 'male', 'other', 'unknown'] as const;

/** `avatar/start_session`: the case, the persona the clinician speaks as, and optionally the patient. */
export const StartSessionParams = Type.Object(
  {
    patient_case: Type.Object(
      {
        chief_complaint: Type.String({ minLength: 1, maxLength: 1000 }),
        age: Type.Integer({ minimum: 0, maximum: 130 }),
        // Enums (not unions of literals) so a bad value gets one error listing the allowed values.
        gender: Type.Enum(GENDERS),
        urgency: Type.Enum(URGENCIES),
      },
      { additionalProperties: false },
    ),
    persona: Type.Object(
      { name: Type.String({ minLength: 1, maxLength: 100 }), role: Type.String({ minLength: 1, maxLength: 100 }) },
      { additionalProperties: false },
    ),
    patient_ref: Type.Optional(Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:/-]+$' })),
  },
  { additionalProperties: false },
);
export type StartSession = Static<typeof StartSessionParams>;

const SessionId = Type.String({ minLength: 1, maxLength: 64 });

/** `avatar/patient_message`. */
export const PatientMessageParams = Type.Object(
  { session_id: SessionId, message: Type.String({ minLength: 1, maxLength: 4000 }) },
  { additionalProperties: false },
);
export type PatientMessage = Static<typeof PatientMessageParams>;

/** `avatar/get_status` and `avatar/end_session`. */
export const SessionParams = Type.Object({ session_id: SessionId }, { additionalProperties: false });
export type SessionRef = Static<typeof SessionParams>;
