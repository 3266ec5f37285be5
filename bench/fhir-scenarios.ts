// The FHIR directory's rows of `npm run bench` (issue 32, item 4): `Endpoint?connection-type=…&_count=20`
// against bare Fastify sending the same bytes, on the registry with the answer cache (one query
// repeated: a hit) and on the one with it off (varied connection types and pages deep into the
// directory: every answer computed). The FHIR searches use discovery's answer cache and its setting
// (REGISTRY_DISCOVERY_CACHE_ENTRIES), so the same two registries serve both.
import type { Figures, LoadOptions } from './measure.ts';

type Measure = (scenario: string, answers: string[], ward: () => Promise<Figures>) => Promise<void>;
type Run = (url: string, options: Omit<LoadOptions, 'connections' | 'durationS'>) => () => Promise<Figures>;

/** Connection types as a FHIR client writes them: HL7's codes with their system, Ward's by code alone. */
const CONNECTION_TYPES = ['hl7v2-mllp', 'http://terminology.hl7.org/CodeSystem/endpoint-connection-type|hl7-fhir-rest', 'mesh-a2a-jsonrpc'];
/** Pages followed per connection type for the varied workload: its queries reach this deep into the directory. */
const PAGES_DEEP = 10;

export async function fhirScenarios(cachedUrl: string, uncachedUrl: string, measure: Measure, run: Run, get: (url: string) => Promise<string>): Promise<void> {
  const hitPath = `/fhir/Endpoint?${new URLSearchParams({ 'connection-type': 'hl7v2-mllp', _count: '20' })}`;
  const hit = await get(cachedUrl + hitPath);
  await measure('FHIR Endpoint?connection-type&_count=20, cache hit', [hit], run(cachedUrl, { request: { path: hitPath } }));

  // The varied workload: for each connection type, its first PAGES_DEEP pages (their `next` links).
  const paths: string[] = [];
  for (const type of CONNECTION_TYPES) {
    let path: string | undefined = `/fhir/Endpoint?${new URLSearchParams({ 'connection-type': type, _count: '20' })}`;
    for (let page = 0; path && page < PAGES_DEEP; page += 1) {
      paths.push(path);
      const bundle = JSON.parse(await get(uncachedUrl + path)) as { link: Array<{ relation: string; url: string }> };
      const next = bundle.link.find((link) => link.relation === 'next')?.url;
      path = next ? next.slice(next.indexOf('/fhir/')) : undefined;
    }
  }
  const samples = await Promise.all(paths.map((path) => get(uncachedUrl + path)));
  let n = 0;
  await measure('FHIR Endpoint?connection-type&_count=20, cache miss (varied types and pages)', samples, run(uncachedUrl, { next: () => ({ path: paths[n++ % paths.length] as string }) }));
}

/**
 * A connection type no endpoint has: each request reads the most agents a page may read (1000,
 * resource-pages.ts) and answers an empty page with a `next` link. What a rare type costs without an
 * endpoint index.
 */
export async function fhirAbsentTypeScenario(uncachedUrl: string, measure: Measure, run: Run, get: (url: string) => Promise<string>): Promise<void> {
  const path = `/fhir/Endpoint?${new URLSearchParams({ 'connection-type': 'dicom-wado-rs', _count: '20' })}`;
  await measure('FHIR Endpoint?connection-type (no endpoint has it), cache miss', [await get(uncachedUrl + path)], run(uncachedUrl, { request: { path } }));
}
