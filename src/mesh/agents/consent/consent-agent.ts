import { join } from 'node:path';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import type { Clock } from '../../../core/clock.ts';
import { PURPOSES_OF_USE, type ConsentChecker } from '../../runtime/consent-requirement.ts';
import type { AgentContext, MeshAgent } from '../../runtime/mesh-agent.ts';
import { MeshRpcError } from '../../runtime/mesh-errors.ts';
import type { TaskExecutor } from '../../runtime/tasks/task-executor.ts';
import { CONSENT_AGENT_INFO } from './consent-info.ts';
import { SqliteConsentStore, isActive, type ConsentKey, type ConsentRecord, type ConsentStore } from '../../storage/consent-store.ts';

/** An opaque patient reference (`Patient/123`, `urn:uuid:…`): never a name, number or birth date. */
const PatientRef = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:/-]+$' });
const Purpose = Type.Union(PURPOSES_OF_USE.map((purpose) => Type.Literal(purpose)));
const Requester = Type.String({ minLength: 1, maxLength: 512 });

export const ConsentKeyParams = Type.Object({ requester: Requester, patient_ref: PatientRef, purpose: Purpose });
export const ConsentGrantParams = Type.Object({
  requester: Requester,
  patient_ref: PatientRef,
  purpose: Purpose,
  expires_at: Type.Optional(Type.String({ format: 'date-time' })),
});
type GrantParams = Static<typeof ConsentGrantParams>;

function view(record: ConsentRecord, now: string) {
  return { ...record, status: record.revoked_at !== null ? 'revoked' : isActive(record, now) ? 'active' : 'expired' };
}

/** The consent logic over a store, shared by the methods, the task executor and the local checker. */
export function createConsentService(store: ConsentStore, clock: Clock) {
  const now = () => clock.now().toISOString();
  return {
    grant(params: GrantParams, grantedBy: string) {
      let expiresAt: string | null = null;
      if (params.expires_at !== undefined) {
        const date = new Date(params.expires_at);
        if (Number.isNaN(date.getTime()) || date.toISOString() <= now()) {
          throw new MeshRpcError('VALIDATION_ERROR', 'expires_at must be a date-time in the future', {
            errors: [{ pointer: '/expires_at', reason: 'must be in the future' }],
          });
        }
        expiresAt = date.toISOString();
      }
      return { consent: view(store.grant(params, grantedBy, now(), expiresAt), now()) };
    },
    check(key: ConsentKey) {
      const record = store.find(key);
      const granted = isActive(record, now());
      return { granted, ...key, expires_at: granted ? record.expires_at : null };
    },
    revoke(key: ConsentKey, revokedBy: string) {
      const record = store.revoke(key, revokedBy, now());
      return { revoked: record !== undefined, ...key };
    },
  };
}

/** Tasks carry one action as a data part: `{action: "grant"|"check"|"revoke", requester, patient_ref, purpose}`. */
function consentExecutor(service: ReturnType<typeof createConsentService>): TaskExecutor {
  return async ({ message, call }) => {
    const part = message.parts.find((candidate) => candidate.kind === 'data');
    const data = part?.kind === 'data' ? part.data : undefined;
    const action = data?.action;
    if (!data || (action !== 'grant' && action !== 'check' && action !== 'revoke')) {
      return { state: 'input-required', message: 'Send a data part {action: "grant" | "check" | "revoke", requester, patient_ref, purpose}.' };
    }
    const { action: _action, ...params } = data;
    const schema = action === 'grant' ? ConsentGrantParams : ConsentKeyParams;
    if (!Value.Check(schema, params)) return { state: 'failed', message: 'The consent request is not valid.' };
    const result =
      action === 'grant'
        ? service.grant(params as GrantParams, call.principal.sub)
        : action === 'check'
          ? service.check(params as ConsentKey)
          : service.revoke(params as ConsentKey, call.principal.sub);
    return { state: 'completed', message: `consent/${action} done`, artifacts: [{ name: `consent/${action}`, parts: [{ kind: 'data', data: result }] }] };
  };
}

/**
 * The consent agent (contract §10): `consent/grant`, `consent/check`, `consent/revoke`, skill
 * `consent.verify`, a durable store in its data directory. Any authenticated mesh caller may grant
 * or revoke; the record keeps who did (`granted_by`, `revoked_by`).
 */
export function createConsentAgent(context: Pick<AgentContext, 'dataDir' | 'clock'>): MeshAgent & { checker: ConsentChecker } {
  const store = new SqliteConsentStore(join(context.dataDir, 'consents.sqlite'));
  const service = createConsentService(store, context.clock);
  return {
    info: CONSENT_AGENT_INFO,
    methods: {
      'consent/grant': {
        description: 'Record consent for a requester, patient reference and purpose (optionally until expires_at).',
        params: ConsentGrantParams,
        handle: (params: GrantParams, call) => service.grant(params, call.principal.sub),
      },
      'consent/check': {
        description: 'Whether consent is in force: {granted}.',
        params: ConsentKeyParams,
        handle: (params: ConsentKey) => service.check(params),
      },
      'consent/revoke': {
        description: 'Revoke consent; {revoked: false} when none was in force.',
        params: ConsentKeyParams,
        handle: (params: ConsentKey, call) => service.revoke(params, call.principal.sub),
      },
    },
    executeTask: consentExecutor(service),
    checker: { isGranted: async (query) => service.check(query).granted },
    close: () => store.close(),
  };
}
