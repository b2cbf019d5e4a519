// test/conformance.test.ts
import { runProviderConformance } from '@tenferro/core/testing';
import { createXProvider } from '../src/index.js';

runProviderConformance(() => createXProvider(), { budgets: [1, 2] });
