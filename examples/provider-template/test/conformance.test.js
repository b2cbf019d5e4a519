// The conformance kit every tenferro provider runs in its own CI: results against the oracle,
// guard bands, declines before writing, and an honest thread census — at budgets 1 and 2.
import { runProviderConformance } from '@tenferro/core/testing';
import { describe } from 'vitest';
import { createExampleProvider } from '../src/index.js';

describe('tenferro-provider-example', () => {
  runProviderConformance(() => createExampleProvider(), { budgets: [1, 2], cases: 3 });
});
