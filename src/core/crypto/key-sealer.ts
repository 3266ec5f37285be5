/**
 * The registry's private signing keys encrypted at rest (docs/security.md): AES-256-GCM under a
 * key-encryption key (KEK) from the environment or a file, with the key's `kid` as additional
 * authenticated data, so a sealed key cannot be moved to another row. A sealed value reads
 * `wardkey:v1:<kek id>:<iv>:<ciphertext>:<tag>` (base64url); the KEK id is the first 8 bytes of its
 * SHA-256, so the registry knows which KEK opens a value. Rotating the KEK: configure the new one as
 * current and the old one as previous; at start every key is sealed again under the current one.
 * Without a KEK, keys are stored as JSON text, as before.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ConfigError } from '../env-schema.ts';

const PREFIX = 'wardkey:v1:';

export type KeySealer = {
  /** Whether a current KEK is configured (new keys are sealed). */
  readonly sealing: boolean;
  seal(plaintext: string, kid: string): string;
  open(stored: string, kid: string): string;
  /** Whether `stored` is already sealed under the current KEK (nothing to do at start). */
  isCurrent(stored: string): boolean;
};

const kekId = (kek: Buffer) => createHash('sha256').update(kek).digest('base64url').slice(0, 11);

/** Parses a KEK as configured: 32 bytes in base64, base64url or hex. */
export function parseKek(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  return bytes.length === 32 ? bytes : undefined;
}

export function createKeySealer(keys: { current?: Buffer | undefined; previous?: readonly Buffer[] }): KeySealer {
  const current = keys.current;
  const byId = new Map<string, Buffer>();
  for (const kek of [...(keys.previous ?? []), ...(current ? [current] : [])]) byId.set(kekId(kek), kek);
  const currentId = current ? kekId(current) : undefined;

  return {
    sealing: current !== undefined,
    seal(plaintext, kid) {
      if (!current || !currentId) return plaintext;
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(kid));
      const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return `${PREFIX}${currentId}:${iv.toString('base64url')}:${sealed.toString('base64url')}:${cipher.getAuthTag().toString('base64url')}`;
    },
    open(stored, kid) {
      if (!stored.startsWith(PREFIX)) return stored;
      const [id = '', iv = '', sealed = '', tag = ''] = stored.slice(PREFIX.length).split(':');
      const kek = byId.get(id);
      if (!kek) {
        throw new Error(
          `signing key ${kid} is encrypted under key-encryption key ${id}, which is not configured (REGISTRY_KEY_ENCRYPTION_KEY, or REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS while rotating)`,
        );
      }
      const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(kid));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
      } catch {
        throw new Error(`signing key ${kid} could not be decrypted: the stored value or its key-encryption key is not the one it was sealed with`);
      }
    },
    isCurrent(stored) {
      return currentId === undefined ? !stored.startsWith(PREFIX) : stored.startsWith(`${PREFIX}${currentId}:`);
    },
  };
}

/** No KEK: keys stored as JSON text (development, or a deployment that has not set one). */
export const PLAINTEXT_KEYS: KeySealer = createKeySealer({});

type KekSettings = {
  readonly REGISTRY_KEY_ENCRYPTION_KEY?: string | undefined;
  readonly REGISTRY_KEY_ENCRYPTION_KEY_FILE?: string | undefined;
  readonly REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS?: string | undefined;
};

/** The sealer the configuration asks for; a KEK that is not 32 bytes stops start-up naming its variable. */
export function keySealerFromConfig(config: KekSettings): KeySealer {
  if (config.REGISTRY_KEY_ENCRYPTION_KEY && config.REGISTRY_KEY_ENCRYPTION_KEY_FILE) {
    throw new ConfigError('REGISTRY_KEY_ENCRYPTION_KEY_FILE', 'set REGISTRY_KEY_ENCRYPTION_KEY or its _FILE, not both');
  }
  let currentText = config.REGISTRY_KEY_ENCRYPTION_KEY;
  if (config.REGISTRY_KEY_ENCRYPTION_KEY_FILE) {
    try {
      currentText = readFileSync(config.REGISTRY_KEY_ENCRYPTION_KEY_FILE, 'utf8');
    } catch (error) {
      throw new ConfigError('REGISTRY_KEY_ENCRYPTION_KEY_FILE', `cannot be read: ${(error as Error).message}`);
    }
  }
  const current = currentText === undefined ? undefined : parseKek(currentText);
  if (currentText !== undefined && !current) {
    const variable = config.REGISTRY_KEY_ENCRYPTION_KEY_FILE ? 'REGISTRY_KEY_ENCRYPTION_KEY_FILE' : 'REGISTRY_KEY_ENCRYPTION_KEY';
    throw new ConfigError(variable, 'must be 32 bytes in base64 or hex (openssl rand -base64 32)');
  }
  const previous = (config.REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS ?? '')
    .split(',')
    .filter((text) => text.trim() !== '')
    .map((text) => {
      const kek = parseKek(text);
      if (!kek) throw new ConfigError('REGISTRY_KEY_ENCRYPTION_KEY_PREVIOUS', 'each key must be 32 bytes in base64 or hex');
      return kek;
    });
  return createKeySealer({ current, previous });
}
