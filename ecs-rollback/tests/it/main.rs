//! The rollback layer's integration tests, one binary with a module per
//! topic: `sync_test` (the arena under ggrs's sync test), `types` (what a
//! driver refuses at the start), `p2p` (two peers over a lossy loopback
//! link, a peer that leaves, a spectator), `hostile` (garbage sent to a
//! peer), `snapshot` (a save and a load by hand), `allocations` (a save
//! and a load allocate nothing in steady state), `incremental` (a save
//! keeps only the hashes of columns nothing wrote to), `events` (event
//! queues, removal logs and their readers roll back; registered systems'
//! state does not).

mod allocations;
mod arena;
mod events;
mod hostile;
mod incremental;
mod net;
mod p2p;
mod snapshot;
mod sync_test;
mod types;
