// The one pause of the tests: a wait of a fixed time, for what no condition can be asked of
// (a log written, a timer's run, a window that must pass). A wait on a condition is `until`.
export { setTimeout as sleep } from 'node:timers/promises'
