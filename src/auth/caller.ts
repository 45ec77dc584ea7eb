import type { Plan, SubscriptionStatus } from '../generated/prisma/enums.js'
import type { Scope } from './scopes.js'

export interface Subscription {
  plan: Plan
  status: SubscriptionStatus
  currentPeriodEnd: Date | null
}

/** Who is calling: set by the auth hook on every /api request. */
export interface Caller {
  apiKeyId: string
  /** What the key may do now (every scope for a key stored as `*`). */
  scopes: Scope[]
  user: { id: string, email: string, name: string, createdAt: Date }
  organization: { id: string, name: string }
  subscription: Subscription
}

/**
 * Pro access now: plan pro, status active or trialing, and the paid period not over
 * (no period end means open-ended). Everyone else is on the free tier.
 */
export function hasProAccess (subscription: Subscription, now: Date = new Date()): boolean {
  return subscription.plan === 'pro' &&
    (subscription.status === 'active' || subscription.status === 'trialing') &&
    (subscription.currentPeriodEnd === null || subscription.currentPeriodEnd.getTime() > now.getTime())
}

export function entitlements (subscription: Subscription, now: Date = new Date()): { analytics: boolean, branding: boolean } {
  const pro = hasProAccess(subscription, now)
  return { analytics: pro, branding: pro }
}
