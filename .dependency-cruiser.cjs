// The layers of src/, lowest first, and the rules that keep imports pointing down them
// (docs/architecture.md, "Layers"). `npm run lint:layers` checks them (CI runs it with the
// lint): a file may import its own layer's files and any lower layer's, never a higher one's;
// folders of one layer do not import each other (so no two folders import each other, and no
// circle of folders can form); no file imports itself back through others. Type-only imports
// count: they tie the code together as much as the others.
const LAYERS = [
  { name: 'foundation', path: '^src/(config|errors|error-codes|limits|version|signed-json|stop-signals)\\.ts$' },
  // What operators see (log fields now, traces next): under the database, which it will trace.
  { name: 'telemetry', path: '^src/telemetry/' },
  { name: 'db', path: '^src/db/' },
  // The change log's primitives, which sync (jobs/) and webhooks/ both read: src/changes/README.md.
  { name: 'changes', path: '^src/changes/' },
  { name: 'auth and zones', path: '^src/(auth|zones)/', folders: ['auth', 'zones'] },
  { name: 'schemas', path: '^src/schemas/' },
  { name: 'plugins', path: '^src/plugins/' },
  // Webhooks read the change log as sync does (src/changes/): a feature beside jobs/, not on it.
  { name: 'features', path: '^src/(jobs|me|health|admin|demo|webhooks)/', folders: ['jobs', 'me', 'health', 'admin', 'demo', 'webhooks'] },
  { name: 'app', path: '^src/(app|server-options|validation)\\.ts$' },
  { name: 'entries', path: '^src/(server|migrate)\\.ts$' },
]

// Inside src/jobs/, the same: a job's rows under the reads that use them, the list above the
// sync it extends and the dashboard above the analytics it batches, job-routes.ts (the routes'
// registration) on top.
const JOBS = [
  { name: 'jobs: a job', path: '^src/jobs/job/' },
  { name: 'jobs: sync and analytics', path: '^src/jobs/(sync|analytics)/', folders: ['jobs/sync', 'jobs/analytics'] },
  // The list and the dashboard stand on the reads they extend (sync's, analytics').
  { name: 'jobs: the list and the dashboard', path: '^src/jobs/(list|dashboard)/', folders: ['jobs/list', 'jobs/dashboard'] },
  { name: 'jobs: the routes', path: '^src/jobs/job-routes\\.ts$' },
]

const upward = (layers) => layers.flatMap((layer, i) => layers.slice(i + 1).map(higher => ({
  name: 'no-import-up',
  comment: `${layer.name} is below ${higher.name}: it may not import it (docs/architecture.md, "Layers")`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: higher.path },
})))

// A file outside every layer of its scope, whichever way it is tied in: by what it imports,
// by what imports it, or by nothing (an orphan).
const unplaced = (scope, layers) => {
  const comment = `a file of ${scope} outside every layer: place it in one (here and in docs/architecture.md)`
  const outside = { path: `^${scope}`, pathNot: [...layers.map(l => l.path), '^src/generated/'] }
  return [
    { name: 'every-file-in-a-layer', comment, severity: 'error', from: outside, to: {} },
    { name: 'every-file-in-a-layer', comment, severity: 'error', from: { path: '^src/' }, to: outside },
    { name: 'every-file-in-a-layer', comment, severity: 'error', from: { ...outside, orphan: true }, to: {} },
  ]
}

const sideways = (layers) => layers.filter(layer => layer.folders !== undefined).map(layer => ({
  name: 'no-import-sideways',
  comment: `the folders of ${layer.name} (${layer.folders.join(', ')}) do not import each other: what two of them share goes a layer down`,
  severity: 'error',
  from: { path: `^src/(${layer.folders.join('|')})/` },
  to: { path: `^src/(${layer.folders.join('|')})/`, pathNot: '^src/$1/' },
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...upward(LAYERS),
    ...sideways(LAYERS),
    ...upward(JOBS),
    ...sideways(JOBS),
    {
      name: 'no-circular',
      comment: 'files that import each other, however far round: split what both need into a file below them',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    ...unplaced('src/', LAYERS),
    ...unplaced('src/jobs/', JOBS),
    {
      name: 'schemas-are-pure',
      comment: 'the API\'s schemas describe requests and answers: they import nothing of ours but the foundation (docs/architecture.md, "Layers")',
      severity: 'error',
      from: { path: '^src/schemas/' },
      to: { path: '^src/', pathNot: ['^src/schemas/', LAYERS[0].path] },
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Prisma's generated client is seen where it is imported (the schemas may not), not cruised.
    doNotFollow: { path: ['node_modules', '^src/generated/'] },
  },
}
