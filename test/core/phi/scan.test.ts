import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  DEFAULT_MAX_DEPTH,
  PHI_DETECTOR_NAMES,
  isValidNhsNumber,
  scanForPhi,
  scanHeadersForPhi,
  scanQueryForPhi,
  scanTextForPhi,
  type PhiFinding,
} from '../../../src/core/phi/index.ts';
import {
  BLOCKED,
  INVALID_NHS_NUMBERS,
  ORDINARY,
  VALID_NHS_NUMBERS,
  passesMod11,
  type BlockedSample,
  type OrdinarySample,
} from './corpus.ts';
import fc from 'fast-check';
import { generatedRegistration } from './generated-ordinary.ts';

function scan(sample: BlockedSample | OrdinarySample): PhiFinding[] {
  switch (sample.in) {
    case 'query':
      return scanQueryForPhi(sample.input as Record<string, unknown>);
    case 'header':
      return scanHeadersForPhi(sample.input as Record<string, string>).map(({ detector, pointer }) => ({ detector, pointer }));
    case 'body':
      return scanForPhi(sample.input);
  }
}

/** Every string in a value, so a test can check that none of them leaks into a finding. */
function stringsIn(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number') out.push(String(value));
  else if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      out.push(key);
      stringsIn(child, out);
    }
  }
  return out;
}

describe('the corpus', () => {
  test('has at least 40 samples of each kind and covers every detector', () => {
    assert.ok(BLOCKED.length >= 40, `only ${BLOCKED.length} blocked samples`);
    assert.ok(ORDINARY.length >= 40, `only ${ORDINARY.length} ordinary samples`);
    for (const name of PHI_DETECTOR_NAMES) {
      assert.ok(BLOCKED.filter((s) => s.detector === name).length >= 5, `too few samples for ${name}`);
    }
  });

  test('uses NHS numbers that really pass mod-11 and invalid ones that really fail it', () => {
    for (const n of VALID_NHS_NUMBERS) assert.ok(passesMod11(n), n);
    for (const n of INVALID_NHS_NUMBERS) assert.ok(!passesMod11(n), n);
  });
});

describe('PHI that must be blocked', () => {
  for (const sample of BLOCKED) {
    test(`finds ${sample.detector} at "${sample.pointer}" for ${sample.name}`, () => {
      const findings = scan(sample);
      assert.ok(
        findings.some((f) => f.detector === sample.detector && f.pointer === sample.pointer),
        `expected ${sample.detector} at ${sample.pointer}, got ${JSON.stringify(findings)}`,
      );
    });
  }
});

describe('ordinary registry traffic', () => {
  for (const sample of ORDINARY) {
    test(`passes ${sample.name}`, () => {
      assert.deepEqual(scan(sample), []);
    });
  }
});

describe('generated legitimate registrations', () => {
  test('pass: clinicians, conditions, service desks, dates, versions and codes in any combination', () => {
    fc.assert(
      fc.property(generatedRegistration, (body) => {
        assert.deepEqual(scanForPhi(body), [], JSON.stringify(body));
      }),
      { numRuns: Number(process.env.PHI_GENERATED_RUNS ?? 2000) },
    );
  });
});

describe('findings', () => {
  test('never contain the matched value, only a detector name and a pointer', () => {
    for (const sample of BLOCKED) {
      for (const finding of scan(sample)) {
        assert.deepEqual(Object.keys(finding).sort(), ['detector', 'pointer']);
        assert.ok(PHI_DETECTOR_NAMES.includes(finding.detector));
        const leaked = stringsIn(sample.input).filter(
          (s) => s.length >= 6 && /\d/.test(s) && JSON.stringify(finding).includes(s),
        );
        assert.deepEqual(leaked, [], `${sample.name} leaked through ${JSON.stringify(finding)}`);
      }
    }
  });

  test('come in document order, one per detector and pointer', () => {
    const findings = scanForPhi({
      a: 'SSN 123-45-6789',
      b: [{ nhs_number: '9434765919' }, 'DOB: 1980-03-12'],
      c: { resourceType: 'Patient', mrn: 'A1234567' },
    });
    assert.deepEqual(findings, [
      { detector: 'us_ssn', pointer: '/a' },
      { detector: 'uk_nhs_number', pointer: '/b/0/nhs_number' },
      { detector: 'date_of_birth', pointer: '/b/1' },
      { detector: 'fhir_resource', pointer: '/c' },
      { detector: 'mrn', pointer: '/c/mrn' },
    ]);
  });

  test('point at the root with an empty pointer and escape ~ and / in keys', () => {
    assert.deepEqual(scanForPhi('DOB 1980-03-12'), [{ detector: 'date_of_birth', pointer: '' }]);
    assert.deepEqual(scanForPhi({ 'a~b/c': { '': 'MRN: 12345678' } }), [
      { detector: 'mrn', pointer: '/a~0b~1c/' },
    ]);
  });

  test('report a key that carries PHI at its object, so the pointer does not spell the PHI out', () => {
    assert.deepEqual(scanForPhi({ tags: { 'NHS 943 476 5919': true } }), [
      { detector: 'uk_nhs_number', pointer: '/tags' },
    ]);
    assert.deepEqual(scanForPhi({ 'DOB 1980-03-12': 'x' }), [{ detector: 'date_of_birth', pointer: '' }]);
  });
});

describe('bounds', () => {
  function nested(depth: number, leaf: unknown): unknown {
    let value = leaf;
    for (let i = 0; i < depth; i++) value = { next: value };
    return value;
  }

  test('stop descending below maxDepth, which defaults to 64', () => {
    assert.equal(DEFAULT_MAX_DEPTH, 64);
    assert.equal(scanForPhi(nested(64, 'SSN 123-45-6789')).length, 1);
    assert.deepEqual(scanForPhi(nested(65, 'SSN 123-45-6789')), []);
    assert.deepEqual(scanForPhi(nested(3, 'SSN 123-45-6789'), { maxDepth: 2 }), []);
    assert.deepEqual(scanForPhi(nested(2, 'SSN 123-45-6789'), { maxDepth: 2 }), [
      { detector: 'us_ssn', pointer: '/next/next' },
    ]);
  });

  test('stop at maxFindings, which defaults to 20', () => {
    const many = Array.from({ length: 50 }, () => 'SSN 123-45-6789');
    assert.equal(scanForPhi(many).length, 20);
    assert.deepEqual(scanForPhi(many, { maxFindings: 3 }), [
      { detector: 'us_ssn', pointer: '/0' },
      { detector: 'us_ssn', pointer: '/1' },
      { detector: 'us_ssn', pointer: '/2' },
    ]);
  });

  test('finish on pathological inputs without a catastrophic regex', () => {
    const MiB = 1 << 20;
    const fillers = [
      '1'.repeat(MiB),
      '123-45-'.repeat(MiB / 7),
      '943 476 '.repeat(MiB / 8),
      'MRN 12 '.repeat(MiB / 7),
      'DOB: 12/'.repeat(MiB / 8),
      'PID|'.repeat(MiB / 4),
      `MSH|${'|'.repeat(MiB)}PID|`,
      `{"resourceType":${'['.repeat(MiB / 2)}`,
      `[${'['.repeat(100_000)}{"resourceType":"Patient"}${']'.repeat(100_001)}`,
      'nhs '.repeat(MiB / 4),
      'Mrs Jane Doe, diabetes; call 07700 900123. '.repeat(MiB / 44),
      'Abc '.repeat(MiB / 4) + 'asthma',
      'jane.doe@gmail.com re her '.repeat(MiB / 26),
      // Many people and many conditions: every person was paired with every mention (quadratic; the
      // second took over 100 s before the pairing looked only within reach).
      'Emma Watson wrote. Diabetes happened. '.repeat(MiB / 38),
      'Jane Smith, jane.smith@x.org. Asthma. '.repeat(MiB / 38),
      'hx of hx of hx of asthma '.repeat(MiB / 25),
    ];
    for (const text of fillers) scanForPhi({ text, [text.slice(0, 4096)]: 1 });
    let deep: unknown = 'SSN 123-45-6789';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    assert.deepEqual(scanForPhi(deep), []);
  });
});

describe('query scanning', () => {
  test('reports /query/<name> and /query/<name>/<index> for repeated values', () => {
    assert.deepEqual(
      scanQueryForPhi({ jurisdiction: 'GB', nhs_number: ['x', '9434765919'], q: 'DOB 1980-03-12' }),
      [
        { detector: 'uk_nhs_number', pointer: '/query/nhs_number/1' },
        { detector: 'date_of_birth', pointer: '/query/q' },
      ],
    );
  });

  test('scans parameter names, reporting a hit in a name at /query', () => {
    assert.deepEqual(scanQueryForPhi({ 'ssn/123-45-6789': '' }), [{ detector: 'us_ssn', pointer: '/query' }]);
  });

  test('escapes ~ and / in parameter names', () => {
    assert.deepEqual(scanQueryForPhi({ 'a~b/c': 'SSN 123-45-6789' }), [
      { detector: 'us_ssn', pointer: '/query/a~0b~1c' },
    ]);
  });
});

describe('NHS number mod-11 check', () => {
  test('accepts known valid numbers', () => {
    for (const n of ['9434765919', '4010232137', '4857773457', '6123456784', '7210034560']) {
      assert.ok(isValidNhsNumber(n), n);
    }
  });

  test('rejects wrong check digits, a check of 10, and anything but ten digits', () => {
    for (const n of [...INVALID_NHS_NUMBERS, '943476591', '94347659190', '943 476 5919', 'abcdefghij', '']) {
      assert.ok(!isValidNhsNumber(n), n);
    }
  });

  test('maps a check of 11 to 0', () => {
    assert.ok(isValidNhsNumber('7210034560'));
    assert.ok(!isValidNhsNumber('7210034561'));
  });

  test('flags only issuable numbers as text: mod-11 failures and placeholders pass', () => {
    for (const n of INVALID_NHS_NUMBERS) assert.deepEqual(scanTextForPhi(`NHS number ${n}`), [], n);
    assert.deepEqual(scanTextForPhi('NHS number 0000000000'), []);
    assert.deepEqual(scanTextForPhi('NHS number 943 476 5919'), [{ detector: 'uk_nhs_number', pointer: '' }]);
  });
});
