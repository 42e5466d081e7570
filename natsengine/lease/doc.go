// Package lease is a linearizable lease on NATS JetStream key-value:
// acquire, renew and release a key for an owner, exclusively, with an
// expiry.
//
// A lease is a key in one bucket. Acquire creates the key (the server
// accepts a create only when the key is absent or deleted), so of any
// number of racing clients, on any connection or machine, exactly one
// wins; Renew and Release compare-and-swap on the revision the holder
// last wrote, so a holder whose lease expired can neither extend nor
// free a successor's lease. Expiry is the bucket's TTL, enforced by the
// NATS server: a lease not renewed within it disappears and can be
// acquired again. In a cluster the bucket is replicated (Options.Replicas)
// and every write is decided by the stream's leader through its quorum,
// so the guarantees hold while a majority of nodes is up; without a
// quorum every call fails (nothing is granted twice).
//
// # Plugging in
//
// Anything that needs "at most one holder" across machines uses one
// bucket per kind of thing and one key per thing: agent claims (the NATS
// journal's Claim), file reservations, work-queue task claims, presence
// (a lease renewed while the session lives). Keys are NATS key-value
// keys: letters, digits and - / _ = . (no leading or trailing dot); map
// other names first (for instance a path hashed or escaped).
//
// Later shared state plugs in the same way: reservations and work-queue
// claims open their own bucket with lease.Open (a TTL that fits them)
// and use Acquire/Renew/Release with the reservation's or task's key;
// presence is a lease kept alive with KeepAlive for as long as the
// session lives. State that is not exclusive (memory, sessions,
// policies) does not belong here: it is to be event-sourced through a
// stream applied to each node's local store.
//
// Time is the server's: the TTL runs on the NATS server's clock, not on
// core.Clock, so a test clock does not move it.
package lease
