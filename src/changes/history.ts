import { createHash } from 'node:crypto'

// Which database history a sync token was made on (issue 35, part 2). A token's snapshot means
// something only in the history of transactions that gave it: a database restored from a dump
// into another cluster (or moved there by logical replication, or restored under a new
// database in the same cluster) hands transaction ids out again, lower or higher, and its log
// and its generation are the old one's data, so an old token's check would pass there and miss
// every change. The history is the cluster's system identifier (set by initdb; a physical
// standby and a promoted standby share it) and the database's oid (a restore into a new
// database of the same cluster gets a new one), read by the page's statement. Not the
// timeline: a failover that lost nothing keeps every token exact (docs/sync-design.md, "Going
// back in time", for the decision and what covers a failover that lost transactions).

/** The history's id as tokens carry it: a hash, so that a token does not show when its cluster was made. */
export function historyId (described: string): string {
  return createHash('sha256').update(described).digest('hex').slice(0, 16)
}
