import type { DatabaseSync, StatementSync } from 'node:sqlite';
import { openAgentDatabase } from './agent-database.ts';
import type { PurposeOfUse } from '../runtime/consent-requirement.ts';

/** One consent: `requester` (a DID) may use `patient_ref`'s data for `purpose`. */
export type ConsentRecord = {
  readonly requester: string;
  readonly patient_ref: string;
  readonly purpose: PurposeOfUse;
  readonly granted_by: string;
  readonly granted_at: string;
  readonly expires_at: string | null;
  readonly revoked_at: string | null;
  readonly revoked_by: string | null;
};

export type ConsentKey = Pick<ConsentRecord, 'requester' | 'patient_ref' | 'purpose'>;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS consents (
  requester TEXT NOT NULL,
  patient_ref TEXT NOT NULL,
  purpose TEXT NOT NULL,
  granted_by TEXT NOT NULL,
  granted_at TEXT NOT NULL,
  expires_at TEXT,
  revoked_at TEXT,
  revoked_by TEXT,
  PRIMARY KEY (requester, patient_ref, purpose)
) WITHOUT ROWID;
`;

/** Where the consent agent keeps consents; the implementation is SQLite ({@link SqliteConsentStore}). */
export interface ConsentStore {
  /** Records (or renews, clearing any revocation) a consent. */
  grant(key: ConsentKey, grantedBy: string, grantedAt: string, expiresAt: string | null): ConsentRecord;
  find(key: ConsentKey): ConsentRecord | undefined;
  /** Revokes an active consent; undefined when there was none to revoke. */
  revoke(key: ConsentKey, revokedBy: string, revokedAt: string): ConsentRecord | undefined;
  close(): void;
}

/**
 * The consent agent's durable store (`node:sqlite`, `consents.sqlite` in its data directory). Full
 * synchronous commits: a grant or revocation that was acknowledged must never be lost, unlike a
 * task's progress.
 */
export class SqliteConsentStore implements ConsentStore {
  readonly #db: DatabaseSync;
  readonly #upsert: StatementSync;
  readonly #select: StatementSync;
  readonly #revoke: StatementSync;

  constructor(path: string) {
    this.#db = openAgentDatabase(path, 'FULL', SCHEMA);
    this.#upsert = this.#db.prepare(`
      INSERT INTO consents (requester, patient_ref, purpose, granted_by, granted_at, expires_at, revoked_at, revoked_by)
      VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)
      ON CONFLICT (requester, patient_ref, purpose) DO UPDATE SET
        granted_by = excluded.granted_by, granted_at = excluded.granted_at, expires_at = excluded.expires_at,
        revoked_at = NULL, revoked_by = NULL
      RETURNING *`);
    this.#select = this.#db.prepare('SELECT * FROM consents WHERE requester = ? AND patient_ref = ? AND purpose = ?');
    this.#revoke = this.#db.prepare(
      'UPDATE consents SET revoked_at = ?, revoked_by = ? WHERE requester = ? AND patient_ref = ? AND purpose = ? AND revoked_at IS NULL RETURNING *',
    );
  }

  grant(key: ConsentKey, grantedBy: string, grantedAt: string, expiresAt: string | null): ConsentRecord {
    return this.#upsert.get(key.requester, key.patient_ref, key.purpose, grantedBy, grantedAt, expiresAt) as ConsentRecord;
  }

  find(key: ConsentKey): ConsentRecord | undefined {
    return this.#select.get(key.requester, key.patient_ref, key.purpose) as ConsentRecord | undefined;
  }

  revoke(key: ConsentKey, revokedBy: string, revokedAt: string): ConsentRecord | undefined {
    return this.#revoke.get(revokedAt, revokedBy, key.requester, key.patient_ref, key.purpose) as ConsentRecord | undefined;
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}

/** Whether a stored consent is in force at `now` (not revoked, not expired). */
export function isActive(record: ConsentRecord | undefined, now: string): record is ConsentRecord {
  return record !== undefined && record.revoked_at === null && (record.expires_at === null || record.expires_at > now);
}
