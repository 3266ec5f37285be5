// `npm run openapi:types`: writes test/generated/registry-openapi.d.ts from the document a registry
// serves (issue 34; scripts/openapi-types-render.ts).
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { GENERATED_TYPES_PATH, renderTypes, servedDocument } from './openapi-types-render.ts';

const types = await renderTypes(await servedDocument());
mkdirSync(dirname(GENERATED_TYPES_PATH), { recursive: true });
writeFileSync(GENERATED_TYPES_PATH, types);
console.log(`wrote ${GENERATED_TYPES_PATH} (${types.length} characters)`);
