// The load side of bench/soak.ts, in a process of its own so that it does not share the
// server's CPU or heap: autocannon's options as JSON in argv[2], its result as JSON on stdout.
import autocannon from 'autocannon'

const result = await autocannon(JSON.parse(process.argv[2] ?? '{}') as autocannon.Options)
process.stdout.write(JSON.stringify(result))
