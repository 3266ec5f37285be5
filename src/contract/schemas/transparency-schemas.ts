import { Type } from 'typebox';
import { Cursor, Nullable, PageLimit, Timestamp } from './common.ts';

const Hash = Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256, 64 hex digits' });
const OutHash = Type.String({ description: 'SHA-256, 64 lower-case hex digits' });
const Size = Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });

export const EntriesQuery = Type.Object(
  {
    start: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: 'First leaf index (default 0)' })),
    cursor: Type.Optional(Cursor),
    limit: Type.Optional(PageLimit),
  },
  { additionalProperties: false },
);

export const EntriesResponse = Type.Object(
  {
    tree_size: Size,
    entries: Type.Array(
      Type.Object({
        leaf_index: Size,
        leaf_hash: OutHash,
        seq: Type.Integer({ description: 'The event this leaf records' }),
        leaf: Type.String({ description: 'The leaf: canonical JSON of {seq, type, subject, occurred_at, data}; its UTF-8 bytes are hashed' }),
      }),
    ),
    next_cursor: Nullable(Type.String()),
  },
  { title: 'LedgerEntries' },
);

export const SignedTreeHeadResponse = Type.Object(
  {
    tree_size: Size,
    root_hash: OutHash,
    timestamp: Timestamp,
    signature: Type.String({ description: 'Compact JWS (typ ward-sth+jws) over {tree_size, root_hash, timestamp}' }),
  },
  { title: 'SignedTreeHead' },
);

export const InclusionQuery = Type.Object(
  {
    leaf_index: Type.Optional(Size),
    leaf_hash: Type.Optional(Hash),
    tree_size: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  },
  { additionalProperties: false },
);

export const InclusionResponse = Type.Object(
  { leaf_index: Size, tree_size: Size, leaf_hash: OutHash, inclusion_path: Type.Array(OutHash) },
  { title: 'InclusionProof' },
);

export const ConsistencyQuery = Type.Object(
  { first: Size, second: Type.Optional(Size) },
  { additionalProperties: false },
);

export const ConsistencyResponse = Type.Object(
  { first: Size, second: Size, consistency_path: Type.Array(OutHash) },
  { title: 'ConsistencyProof' },
);
