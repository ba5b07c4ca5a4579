//! Typed queries: what is fetched ([`QueryData`]), which entities pass
//! ([`QueryFilter`]), the cached [`QueryState`] and the [`QueryIter`].
//!
//! # Aliasing (error `E0001`)
//! A query may borrow each component once when it borrows it mutably:
//! `(&mut A, &A)`, `(&mut A, &mut A)` and `(&mut A, Option<&A>)` would hand
//! out two references to one value, so building such a query panics with
//! `error[E0001]` and the component's name. Several shared borrows
//! (`(&A, &A)`) are fine.

mod access;
mod combinations;
mod condition;
mod fetch;
mod filter;
mod hiding;
mod hook_world;
mod iter;
mod one;
mod par;
mod presence;
mod state;

pub use access::Access;
pub use combinations::QueryCombinationIter;
pub use condition::ArchetypeCondition;
pub use fetch::{ColumnFetch, MutFetch, MutRef, QueryData, ReadOnlyQueryData, RefFetch, TickFetch};
pub use filter::{Added, ArchetypeFilter, Changed, Or, QueryFilter, TicksFetch, With, Without};
pub use iter::{QueryIter, QueryManyIter, QueryManyIterMut};
pub(crate) use one::{query_many, query_many_mut, query_one, query_one_mut};
pub use par::QueryParIter;
pub use presence::{AnyOf, Has};
pub(crate) use state::check_distinct;
pub use state::QueryState;
