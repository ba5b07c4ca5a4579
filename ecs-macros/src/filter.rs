//! `#[derive(QueryFilter)]`: a named struct of filters (`With<T>`,
//! `Without<T>`, `Or<(..)>`, `Added<T>`, `Changed<T>`, other derived
//! filters) that passes the entities passing all of them, like the tuple of
//! its field types. The struct is never built: it only names the filter.
//!
//! As in `derive(Query)`, the impl's `State` and `Fetch` are newtypes as
//! visible as the struct, so a `pub` filter may name private components.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Error, GenericArgument, PathArguments, Result, Type};

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    let name = &input.ident;
    let vis = &input.vis;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new_spanned(
            name,
            format!("`derive(QueryFilter)` needs a struct whose fields are filters; `{name}` is not a struct"),
        ));
    };
    if !input.generics.params.is_empty() {
        return Err(Error::new_spanned(
            &input.generics,
            "`derive(QueryFilter)` supports structs without lifetime, type or const parameters",
        ));
    }
    let engine = crate::path::engine();
    let fields: Vec<&Type> = data.fields.iter().map(|f| &f.ty).collect();
    let archetypal = fields.iter().all(|ty| is_archetypal(ty));
    let archetype_filter = archetypal.then(|| {
        quote! {
            #[automatically_derived]
            impl #engine::ArchetypeFilter for #name {}
        }
    });
    Ok(quote! {
        const _: () = {
            type __Inner = (#(#fields,)*);

            #[doc(hidden)]
            #[repr(transparent)]
            #vis struct __ArchetableFilterState(<__Inner as #engine::QueryFilter>::State);

            #[doc(hidden)]
            #[repr(transparent)]
            #vis struct __ArchetableFilterFetch<'__ecs_w>(<__Inner as #engine::QueryFilter>::Fetch<'__ecs_w>);

            #[automatically_derived]
            impl ::core::clone::Clone for __ArchetableFilterState {
                #[inline]
                fn clone(&self) -> Self {
                    __ArchetableFilterState(::core::clone::Clone::clone(&self.0))
                }
            }

            // SAFETY: every item forwards to the tuple of the field types,
            // which keeps the trait's contract; the newtypes only wrap its
            // state and fetch.
            #[automatically_derived]
            #[allow(unsafe_code)]
            unsafe impl #engine::QueryFilter for #name {
                type State = __ArchetableFilterState;
                type Fetch<'__ecs_w> = __ArchetableFilterFetch<'__ecs_w>;
                const IS_ARCHETYPAL: bool = <__Inner as #engine::QueryFilter>::IS_ARCHETYPAL;

                fn init_state(components: &mut #engine::storage::Components) -> Self::State {
                    __ArchetableFilterState(<__Inner as #engine::QueryFilter>::init_state(components))
                }

                fn get_state(components: &#engine::storage::Components) -> ::core::option::Option<Self::State> {
                    match <__Inner as #engine::QueryFilter>::get_state(components) {
                        ::core::option::Option::Some(state) => ::core::option::Option::Some(__ArchetableFilterState(state)),
                        ::core::option::Option::None => ::core::option::Option::None,
                    }
                }

                fn condition(state: &Self::State) -> #engine::query::ArchetypeCondition {
                    <__Inner as #engine::QueryFilter>::condition(&state.0)
                }

                fn update_access(state: &Self::State, access: &mut #engine::query::Access) {
                    <__Inner as #engine::QueryFilter>::update_access(&state.0, access)
                }

                fn names_component(state: &Self::State, id: #engine::ComponentId) -> bool {
                    <__Inner as #engine::QueryFilter>::names_component(&state.0, id)
                }

                #[inline]
                fn matches(state: &Self::State, archetype: &#engine::storage::Archetype) -> bool {
                    <__Inner as #engine::QueryFilter>::matches(&state.0, archetype)
                }

                fn dangling_fetch<'__ecs_w>() -> Self::Fetch<'__ecs_w> {
                    __ArchetableFilterFetch(<__Inner as #engine::QueryFilter>::dangling_fetch())
                }

                #[inline]
                unsafe fn init_fetch<'__ecs_w>(
                    state: &Self::State,
                    table: #engine::storage::TableRef<'__ecs_w>,
                    ticks: #engine::RunTicks,
                ) -> Self::Fetch<'__ecs_w> {
                    // SAFETY: the caller's promise, for the tuple's state.
                    __ArchetableFilterFetch(unsafe {
                        <__Inner as #engine::QueryFilter>::init_fetch(&state.0, table, ticks)
                    })
                }

                #[inline(always)]
                unsafe fn filter_row(fetch: &mut Self::Fetch<'_>, row: usize) -> bool {
                    // SAFETY: the caller's promise, for the tuple's fetch.
                    unsafe { <__Inner as #engine::QueryFilter>::filter_row(&mut fetch.0, row) }
                }
            }

            #archetype_filter
        };
    })
}

/// Whether a field's filter is known, from its spelling, to decide per
/// archetype: `With`, `Without`, and `Or` or tuples of such.
fn is_archetypal(ty: &Type) -> bool {
    match ty {
        Type::Tuple(tuple) => tuple.elems.iter().all(is_archetypal),
        Type::Paren(paren) => is_archetypal(&paren.elem),
        Type::Group(group) => is_archetypal(&group.elem),
        Type::Path(path) if path.qself.is_none() => {
            let Some(last) = path.path.segments.last() else { return false };
            match last.ident.to_string().as_str() {
                "With" | "Without" => true,
                "Or" => match &last.arguments {
                    PathArguments::AngleBracketed(args) => args.args.iter().all(|a| match a {
                        GenericArgument::Type(t) => is_archetypal(t),
                        _ => false,
                    }),
                    _ => false,
                },
                _ => false,
            }
        }
        _ => false,
    }
}
