import type { Scope } from '../auth/scopes.js'
import type { JobStatus, Plan } from '../generated/prisma/enums.js'

// The demo organizations, their users and jobs (seed.ts makes them, the same on every run).

export interface DemoJob {
  slug: string
  title: string
  status: JobStatus
  questions: number
  screens: number
  scored: boolean
  branding?: { logoUrl: string, brandColor: string }
  euCandidatesAllowed?: boolean
}

export interface DemoOrg {
  key: string
  /** A second demo key, restricted to these scopes (issue 24): a 403 insufficient_scope to try. */
  restrictedKey?: Scope[]
  name: string
  plan: Plan
  user: { name: string, email: string }
  company: string
  jobs: DemoJob[]
}

export const ORGS: DemoOrg[] = [
  {
    key: 'acme',
    restrictedKey: ['jobs:read'],
    name: 'Acme Recruiting',
    plan: 'pro',
    user: { name: 'Alice Pro', email: 'alice@acme.example' },
    company: 'Acme Corp',
    jobs: [
      { slug: 'senior-backend-engineer', title: 'Senior Backend Engineer', status: 'active', questions: 5, screens: 80, scored: true, branding: { logoUrl: 'https://cdn.acme.example/logo.png', brandColor: '#0f62fe' } },
      { slug: 'product-designer', title: 'Product Designer', status: 'active', questions: 4, screens: 36, scored: true },
      { slug: 'data-analyst', title: 'Data Analyst', status: 'active', questions: 3, screens: 0, scored: true },
      { slug: 'customer-success-manager', title: 'Customer Success Manager', status: 'active', questions: 4, screens: 12, scored: false },
      { slug: 'devops-engineer', title: 'DevOps Engineer', status: 'paused', questions: 6, screens: 24, scored: true, euCandidatesAllowed: false },
      { slug: 'sales-development-rep', title: 'Sales Development Representative', status: 'closed', questions: 3, screens: 18, scored: true },
    ],
  },
  {
    key: 'globex',
    name: 'Globex Hiring',
    plan: 'free',
    user: { name: 'Bob Free', email: 'bob@globex.example' },
    company: 'Globex',
    jobs: [
      { slug: 'warehouse-associate', title: 'Warehouse Associate', status: 'active', questions: 3, screens: 20, scored: true },
      { slug: 'office-manager', title: 'Office Manager', status: 'draft', questions: 2, screens: 0, scored: true },
    ],
  },
]
