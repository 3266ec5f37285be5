/**
 * The clinician avatar agent (contract §10; docs/avatar.md): `avatar/start_session`,
 * `avatar/patient_message`, `avatar/get_status`, `avatar/end_session`, and the HTTP routes
 * `GET /dev/token`, `POST /tts`, `GET /tts/voices` and `GET /avatar`. The consultation logic lives in
 * consultation.ts and the extraction rules beside it, speech in speech/; this file binds them.
 */
import type { Clock } from '../../../core/clock.ts';
import type { MeshConfig } from '../../mesh-config.ts';
import type { MeshCallContext } from '../../runtime/call-context.ts';
import type { MeshAgent } from '../../runtime/mesh-agent.ts';
import { MeshRpcError } from '../../runtime/mesh-errors.ts';
import { AVATAR_AGENT_INFO } from './avatar-info.ts';
import { registerAvatarPage } from './avatar-page.ts';
import { PatientMessageParams, SessionParams, StartSessionParams, type PatientMessage, type SessionRef, type StartSession } from './avatar-params.ts';
import { applyPatientMessage, newConsultation, openingOf, phaseOf, progressOf } from './consultation.ts';
import { registerDevTokenRoute } from './dev-token.ts';
import { selectFramework } from './frameworks.ts';
import { SessionStore, type AvatarSession } from './session-store.ts';
import type { EspeakRunOptions } from './speech/espeak.ts';
import { registerSpeechRoutes } from './speech/speech-routes.ts';

export type AvatarAgentOptions = {
  readonly config: MeshConfig;
  readonly clock: Clock;
  /** Inactivity after which a session expires (default 30 minutes). */
  readonly sessionIdleMs?: number;
  /** Speech engine overrides (default: `ESPEAK_NG_PATH`, a 10 s limit per run). */
  readonly speech?: Partial<EspeakRunOptions>;
};

function status(session: AvatarSession) {
  return {
    session_id: session.id,
    framework: session.consultation.framework,
    consultation_phase: phaseOf(session.consultation),
    framework_progress: progressOf(session.consultation),
  };
}

/** The structured summary `avatar/end_session` returns: findings per step, red flags, duration. */
function summary(session: AvatarSession, now: number) {
  const progress = progressOf(session.consultation);
  return {
    ...status(session),
    findings: progress.steps.map((step) => ({
      step: step.key,
      label: step.label,
      findings: session.consultation.findings.filter((finding) => finding.step === step.key).map(({ finding, present }) => ({ finding, present })),
    })),
    red_flags: [...session.consultation.redFlags],
    duration_s: Math.round((now - session.startedAt) / 1000),
  };
}

/** The avatar agent; sessions read `clock`, so tests move time by hand. */
export function createAvatarAgent(options: AvatarAgentOptions): MeshAgent {
  const sessions = new SessionStore(options.clock, options.sessionIdleMs);
  return {
    info: AVATAR_AGENT_INFO,
    methods: {
      'avatar/start_session': {
        description: 'Starts a consultation; the framework follows from the urgency and the complaint. With patient_ref, consent (treatment) is required.',
        params: StartSessionParams,
        consent: { patientRef: (params: StartSession) => params.patient_ref, purpose: () => 'treatment' },
        handle: (params: StartSession, call: MeshCallContext) => {
          const framework = selectFramework(params.patient_case.chief_complaint, params.patient_case.urgency);
          const session = sessions.create(call.principal.sub, params.persona, newConsultation(framework, params.patient_case.chief_complaint));
          const greeting = openingOf(session.consultation, params.persona);
          return { ...status(session), greeting };
        },
      },
      'avatar/patient_message': {
        description: 'The patient\'s reply: findings are extracted and the consultation moves on only on content.',
        params: PatientMessageParams,
        handle: (params: PatientMessage, call: MeshCallContext) => {
          const session = sessions.touch(params.session_id, call.principal.sub);
          const phase = phaseOf(session.consultation);
          if (phase === 'completed' || phase === 'escalated') {
            throw new MeshRpcError('VALIDATION_ERROR', `The consultation is ${phase}; end the session or start a new one`, { consultation_phase: phase });
          }
          const turn = applyPatientMessage(session.consultation, params.message);
          return { ...status(session), clinician_response: turn.clinician_response, findings: turn.findings, red_flags: [...session.consultation.redFlags] };
        },
      },
      'avatar/get_status': {
        description: 'The session\'s phase, framework progress and red flags.',
        params: SessionParams,
        handle: (params: SessionRef, call: MeshCallContext) => {
          const session = sessions.touch(params.session_id, call.principal.sub);
          return { ...status(session), red_flags: [...session.consultation.redFlags] };
        },
      },
      'avatar/end_session': {
        description: 'Ends the session and returns its structured summary.',
        params: SessionParams,
        handle: (params: SessionRef, call: MeshCallContext) => {
          const session = sessions.touch(params.session_id, call.principal.sub);
          if (phaseOf(session.consultation) !== 'escalated') session.consultation.ended = true;
          sessions.delete(session.id);
          return summary(session, sessions.now());
        },
      },
    },
    routes: (app) => {
      registerDevTokenRoute(app, options.config, options.clock);
      registerSpeechRoutes(app, { config: options.config, ...(options.speech ? { engine: options.speech } : {}) });
      registerAvatarPage(app);
    },
  };
}
