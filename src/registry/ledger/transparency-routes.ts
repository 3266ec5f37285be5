import { registryRoutePlugin } from '../http/route-plugin.ts';
import { WardError } from '../../core/errors.ts';
import { decodeCursor, encodeCursor } from '../../contract/cursor.ts';
import { errorResponses } from '../../contract/schemas/common.ts';
import {
  ConsistencyQuery,
  ConsistencyResponse,
  EntriesQuery,
  EntriesResponse,
  InclusionQuery,
  InclusionResponse,
  SignedTreeHeadResponse,
} from '../../contract/schemas/transparency-schemas.ts';

const CURSOR_KIND = 'ledger';

/** The transparency ledger (contract §6; docs/transparency.md). Read-only, no authentication needed. */
export const transparencyRoutes = registryRoutePlugin('ward-transparency-routes', async (app) => {
  const { ledger } = app.ward;
  const tags = ['transparency'];

  app.get(
    '/v1/transparency/entries',
    {
      schema: {
        tags,
        operationId: 'listLedgerEntries',
        summary: 'List ledger entries by leaf index',
        description: 'Pages through the transparency ledger in leaf order: each entry is the canonical JSON of one registry event and its leaf hash (docs/transparency.md).',
        querystring: EntriesQuery,
        response: { 200: EntriesResponse, ...errorResponses() },
      },
    },
    async (request) => {
      const { start, cursor, limit } = request.query;
      if (start !== undefined && cursor !== undefined) throw invalid('/start', 'must not be combined with cursor');
      const from = cursor === undefined ? (start ?? 0) : leafIndexFromCursor(cursor);
      const page = await ledger.entries(from, limit ?? 20);
      return {
        tree_size: page.tree_size,
        entries: page.entries,
        next_cursor: page.next_start === null ? null : encodeCursor(CURSOR_KIND, String(page.next_start)),
      };
    },
  );

  app.get(
    '/v1/transparency/sth',
    { schema: { tags, operationId: 'getSignedTreeHead',
        summary: 'The signed tree head',
        description: 'The current size and root hash of the ledger, signed by the registry (typ ward-sth+jws).', response: { 200: SignedTreeHeadResponse, ...errorResponses() } } },
    async () => ledger.signedTreeHead(),
  );

  app.get(
    '/v1/transparency/proof/inclusion',
    {
      schema: {
        tags,
        operationId: 'getInclusionProof',
        summary: 'Inclusion proof of a leaf (by index or hash) in a tree of a given size',
        description: 'The audit path that proves one leaf, named by index or by hash, is in the tree of the given size (RFC 9162 §2.1.3).',
        querystring: InclusionQuery,
        response: { 200: InclusionResponse, ...errorResponses(404) },
      },
    },
    async (request) => {
      const { leaf_index: index, leaf_hash: hash, tree_size: treeSize } = request.query;
      if ((index === undefined) === (hash === undefined)) {
        throw invalid('/leaf_index', 'exactly one of leaf_index and leaf_hash is required');
      }
      return ledger.inclusionProof(index === undefined ? { hash: hash as string } : { index }, treeSize);
    },
  );

  app.get(
    '/v1/transparency/proof/consistency',
    {
      schema: {
        tags,
        operationId: 'getConsistencyProof',
        summary: 'Consistency proof between two tree sizes',
        description: 'The proof that the tree of size `first` is a prefix of the tree of size `second` (RFC 9162 §2.1.4).',
        querystring: ConsistencyQuery,
        response: { 200: ConsistencyResponse, ...errorResponses() },
      },
    },
    async (request) => ledger.consistencyProof(request.query.first, request.query.second),
  );
});

function leafIndexFromCursor(cursor: string): number {
  const position = decodeCursor(cursor, CURSOR_KIND);
  if (!/^\d{1,16}$/.test(position) || !Number.isSafeInteger(Number(position))) {
    throw invalid('/cursor', 'unknown cursor');
  }
  return Number(position);
}

function invalid(pointer: string, reason: string): WardError {
  return new WardError('VALIDATION_ERROR', 'The request failed validation.', { errors: [{ in: 'query', pointer, reason }] });
}
