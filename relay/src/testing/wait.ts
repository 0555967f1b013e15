/** The relay's tests import the waits from here; they are core's (core/src/testing/wait.ts), shared by every role. */
export { sleep, waitFor } from '@turnpike/core/testing/wait';
