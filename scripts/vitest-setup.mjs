// Shared by every package's vitest config (scripts/vitest-config.mjs), #39: the suite cannot hide
// a failure.
//  - A test that makes no assertion fails (`expect.hasAssertions()` before each test): a test
//    whose checks were skipped by an early `return`, or that only calls code, proves nothing.
//    Assertions made by the conformance kit (@tenferro/core/testing) count: they are `expect`s.
//  - A promise that rejects unhandled while a test runs fails THAT test (attributed by test id),
//    not only the run: an un-awaited `expectCode(...)` or `expect(...).rejects` is caught where it
//    was written. The handler waits one macrotask after each test so a rejection of its last,
//    floating promise is attributed to it. A rejection is attributed to the test that was running
//    when it surfaced (a timer an earlier test left behind lands on a later one: the message says
//    so); one that surfaces between tests fails the next test, named as such. vitest's own report
//    of the unhandled error still fails the run as well.
import { afterEach, beforeEach, expect } from 'vitest';

/** Unhandled rejections per test id (those while no test runs go to the next one). */
const rejections = new Map();
let current;
let between = [];

process.on('unhandledRejection', (reason) => {
  if (current === undefined) between.push(reason);
  else rejections.get(current)?.push(reason);
});

const describeReason = (reason) => (reason instanceof Error ? `${reason.name}: ${reason.message}` : String(reason));

beforeEach((context) => {
  current = context.task.id;
  rejections.set(current, []);
  expect.hasAssertions();
});

afterEach(async (context) => {
  // process 'unhandledRejection' fires after the microtask queue drains: one macrotask turn lets a
  // rejection of this test's last floating promise reach the handler while it is still `current`.
  await new Promise((resolve) => setImmediate(resolve));
  const id = context.task.id;
  const own = rejections.get(id) ?? [];
  rejections.delete(id);
  current = undefined;
  const earlier = between;
  between = [];
  if (own.length > 0) {
    throw new Error(`a promise rejected unhandled while this test ran (${own.length}; an un-awaited expectCode/expect(...).rejects, or a timer an earlier test left): ${own.map(describeReason).join(' | ')}`, { cause: own[0] });
  }
  if (earlier.length > 0) {
    throw new Error(`a promise rejected unhandled before this test started (between tests, from an earlier test or hook): ${earlier.map(describeReason).join(' | ')}`, { cause: earlier[0] });
  }
});
