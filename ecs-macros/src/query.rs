//! `#[derive(Query)]`: a struct of borrowed components is both the query and
//! the item it yields. The impl delegates to the tuple of its fields' query
//! types, so it behaves exactly like the equivalent tuple query.
//!
//! Type parameters carry over to the impl and to the helper types below,
//! with the struct's bounds and `where` clause.
//!
//! The impl's `Fetch`, `State` and `Cache` are not the tuple's types but
//! newtypes around them, declared with the struct's own visibility: a `pub`
//! struct may name components less visible than itself, and those must not
//! appear in the associated types of its public impl (E0446).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Error, GenericArgument, GenericParam, Index, Member, PathArguments, Result, Type};

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    let name = &input.ident;
    let vis = &input.vis;
    let Data::Struct(data) = &input.data else {
        return Err(Error::new_spanned(
            name,
            format!("`derive(Query)` needs a struct of component borrows; `{name}` is not a struct"),
        ));
    };
    let mut lifetimes = Vec::new();
    let mut types = Vec::new();
    for param in &input.generics.params {
        match param {
            GenericParam::Lifetime(l) => lifetimes.push(l.lifetime.clone()),
            GenericParam::Type(t) => {
                let mut t = t.clone();
                t.eq_token = None;
                t.default = None;
                types.push(t);
            }
            other => {
                return Err(Error::new_spanned(
                    other,
                    "`derive(Query)` supports one lifetime parameter (the borrow of the world), type parameters, and \
                     no const parameters",
                ))
            }
        }
    }
    let names: Vec<_> = types.iter().map(|t| t.ident.clone()).collect();
    let where_clause = input.generics.where_clause.as_ref().map(|w| &w.predicates);
    // `<T, U>` after the helper types, or nothing.
    let args = if names.is_empty() { quote!() } else { quote!(<#(#names),*>) };
    let decl = if types.is_empty() { quote!() } else { quote!(<#(#types),*>) };
    if lifetimes.len() > 1 {
        return Err(Error::new_spanned(
            &input.generics,
            "`derive(Query)` supports one lifetime parameter (the borrow of the world)",
        ));
    }
    let engine = crate::path::engine();
    let mut read_only = ReadOnly { known: true, nested: Vec::new() };
    let mut members = Vec::new();
    let mut inner = Vec::new();
    for (i, field) in data.fields.iter().enumerate() {
        members.push(match &field.ident {
            Some(ident) => Member::Named(ident.clone()),
            None => Member::Unnamed(Index::from(i)),
        });
        inner.push(field_query(&field.ty, &engine, &mut read_only)?);
    }
    let item = match lifetimes.first() {
        Some(_) => quote!(#name<'__ecs_w #(, #names)*>),
        None => quote!(#name #args),
    };
    let self_ty = match lifetimes.first() {
        Some(_) => quote!(#name<'__ecs_self #(, #names)*>),
        None => quote!(#name #args),
    };
    let impl_generics = match lifetimes.first() {
        Some(_) => quote!(<'__ecs_self #(, #types)*>),
        None => decl.clone(),
    };
    let bindings: Vec<_> =
        (0..members.len()).map(|i| syn::Ident::new(&format!("__field{i}"), proc_macro2::Span::call_site())).collect();
    let inner = quote!((#(#inner,)*));
    let nested = &read_only.nested;
    let read_only_impl = read_only.known.then(|| {
        quote! {
            // SAFETY: every field is a read-only query (the nested derived
            // queries by the bound).
            #[automatically_derived]
            #[allow(unsafe_code)]
            unsafe impl #impl_generics #engine::ReadOnlyQueryData for #self_ty
            where
                #(#nested: #engine::ReadOnlyQueryData,)*
                #where_clause
            {}
        }
    });
    Ok(quote! {
        const _: () = {
            type __Inner #args = #inner;

            // The tuple query's fetch, state and cache, wrapped in types as
            // visible as the struct (see the module documentation).
            #[doc(hidden)]
            #[repr(transparent)]
            #vis struct __ArchetableFetch<'__ecs_w #(, #types)*>(<__Inner #args as #engine::QueryData>::Fetch<'__ecs_w>)
            where
                #where_clause;

            #[doc(hidden)]
            #[repr(transparent)]
            #vis struct __ArchetableState #decl(<__Inner #args as #engine::QueryData>::State)
            where
                #where_clause;

            #[doc(hidden)]
            #[repr(transparent)]
            #vis struct __ArchetableCache #decl(<__Inner #args as #engine::QueryData>::Cache)
            where
                #where_clause;

            #[automatically_derived]
            impl #decl ::core::clone::Clone for __ArchetableState #args
            where
                #where_clause
            {
                #[inline]
                fn clone(&self) -> Self {
                    __ArchetableState(::core::clone::Clone::clone(&self.0))
                }
            }

            #[automatically_derived]
            impl #decl ::core::clone::Clone for __ArchetableCache #args
            where
                #where_clause
            {
                #[inline]
                fn clone(&self) -> Self {
                    *self
                }
            }

            #[automatically_derived]
            impl #decl ::core::marker::Copy for __ArchetableCache #args
            where
                #where_clause
            {}

            #[automatically_derived]
            #[allow(unsafe_code)]
            unsafe impl #impl_generics #engine::QueryData for #self_ty
            where
                #where_clause
            {
                type Item<'__ecs_w> = #item;
                type Fetch<'__ecs_w> = __ArchetableFetch<'__ecs_w #(, #names)*>;
                type State = __ArchetableState #args;
                type Cache = __ArchetableCache #args;

                fn init_state(components: &mut #engine::storage::Components) -> Self::State {
                    __ArchetableState(<__Inner #args as #engine::QueryData>::init_state(components))
                }

                fn get_state(components: &#engine::storage::Components) -> ::core::option::Option<Self::State> {
                    match <__Inner #args as #engine::QueryData>::get_state(components) {
                        ::core::option::Option::Some(state) => ::core::option::Option::Some(__ArchetableState(state)),
                        ::core::option::Option::None => ::core::option::Option::None,
                    }
                }

                fn update_access(
                    state: &Self::State,
                    components: &#engine::storage::Components,
                    access: &mut #engine::query::Access,
                ) {
                    <__Inner #args as #engine::QueryData>::update_access(&state.0, components, access)
                }

                fn condition(state: &Self::State) -> #engine::query::ArchetypeCondition {
                    <__Inner #args as #engine::QueryData>::condition(&state.0)
                }

                fn names_component(state: &Self::State, id: #engine::ComponentId) -> bool {
                    <__Inner #args as #engine::QueryData>::names_component(&state.0, id)
                }

                const DENSE: bool = <__Inner #args as #engine::QueryData>::DENSE;

                #[inline]
                fn match_archetype(
                    state: &Self::State,
                    archetype: &#engine::storage::Archetype,
                ) -> ::core::option::Option<Self::Cache> {
                    match <__Inner #args as #engine::QueryData>::match_archetype(&state.0, archetype) {
                        ::core::option::Option::Some(cache) => ::core::option::Option::Some(__ArchetableCache(cache)),
                        ::core::option::Option::None => ::core::option::Option::None,
                    }
                }

                fn dangling_fetch<'__ecs_w>() -> Self::Fetch<'__ecs_w> {
                    __ArchetableFetch(<__Inner #args as #engine::QueryData>::dangling_fetch())
                }

                #[inline]
                unsafe fn init_fetch<'__ecs_w>(
                    state: &Self::State,
                    cache: Self::Cache,
                    table: #engine::storage::TableRef<'__ecs_w>,
                    ticks: #engine::RunTicks,
                ) -> Self::Fetch<'__ecs_w> {
                    // SAFETY: the caller's promise, for the tuple's own state
                    // and cache.
                    __ArchetableFetch(unsafe {
                        <__Inner #args as #engine::QueryData>::init_fetch(&state.0, cache.0, table, ticks)
                    })
                }

                #[inline(always)]
                unsafe fn row_matches(fetch: &Self::Fetch<'_>, row: usize) -> bool {
                    // SAFETY: the caller's promise, for the tuple's own fetch.
                    unsafe { <__Inner #args as #engine::QueryData>::row_matches(&fetch.0, row) }
                }

                #[inline(always)]
                unsafe fn fetch<'__ecs_w>(fetch: &mut Self::Fetch<'__ecs_w>, row: usize) -> Self::Item<'__ecs_w> {
                    // SAFETY: the caller's promise, for the tuple's own fetch.
                    let (#(#bindings,)*) = unsafe { <__Inner #args as #engine::QueryData>::fetch(&mut fetch.0, row) };
                    #name { #(#members: #bindings,)* }
                }

                #[inline(always)]
                unsafe fn fetch_next_row<'__ecs_w>(
                    fetch: &mut Self::Fetch<'__ecs_w>,
                    row: usize,
                ) -> Self::Item<'__ecs_w> {
                    // SAFETY: the caller's promise, for the tuple's own fetch.
                    let (#(#bindings,)*) =
                        unsafe { <__Inner #args as #engine::QueryData>::fetch_next_row(&mut fetch.0, row) };
                    #name { #(#members: #bindings,)* }
                }
            }

            #read_only_impl
        };
    })
}

/// Whether the derived query is read-only: `known` is false once a field
/// writes; `nested` lists the nested derived queries, read-only only if
/// each of them is.
struct ReadOnly {
    known: bool,
    nested: Vec<TokenStream>,
}

/// The query type that yields a field of type `ty`.
fn field_query(ty: &Type, engine: &TokenStream, read_only: &mut ReadOnly) -> Result<TokenStream> {
    let unsupported = || {
        let mut message = String::from(
            "`derive(Query)` fields must be `&'w T`, `&'w mut T`, `Mut<'w, T>`, `Entity`, another derived query \
             (`Inner<'w>`), or `Option<..>` of these, where `T` is a component; this field's type is none of them",
        );
        if let Type::Path(path) = ty {
            let shown = path.path.segments.iter().map(|s| s.ident.to_string()).collect::<Vec<_>>().join("::");
            message.push_str(&format!("; to fetch the component, write `&'w {shown}` or `&'w mut {shown}`"));
        }
        Error::new_spanned(ty, message)
    };
    match ty {
        Type::Reference(reference) => {
            let elem = &reference.elem;
            if reference.mutability.is_some() {
                read_only.known = false;
                Ok(quote!(#engine::__private::MutRef<#elem>))
            } else {
                Ok(quote!(&'static #elem))
            }
        }
        Type::Path(path) if path.qself.is_none() => {
            let last = path.path.segments.last().ok_or_else(unsupported)?;
            let args: Vec<&Type> = match &last.arguments {
                PathArguments::AngleBracketed(args) => args
                    .args
                    .iter()
                    .filter_map(|a| match a {
                        GenericArgument::Type(t) => Some(t),
                        _ => None,
                    })
                    .collect(),
                PathArguments::None => Vec::new(),
                PathArguments::Parenthesized(_) => return Err(unsupported()),
            };
            match (last.ident.to_string().as_str(), args.as_slice()) {
                ("Entity", []) => Ok(quote!(#engine::Entity)),
                ("Option", [inner]) => {
                    let inner = field_query(inner, engine, read_only)?;
                    Ok(quote!(::core::option::Option<#inner>))
                }
                ("Mut", [inner]) => {
                    read_only.known = false;
                    Ok(quote!(&'static mut #inner))
                }
                _ if has_lifetime(&last.arguments) => {
                    // Another derived query (`Inner<'w>`): its query type is
                    // itself with the borrow's lifetime made `'static`.
                    let mut nested = path.clone();
                    if let Some(last) = nested.path.segments.last_mut() {
                        if let PathArguments::AngleBracketed(args) = &mut last.arguments {
                            for arg in args.args.iter_mut() {
                                if let GenericArgument::Lifetime(lifetime) = arg {
                                    *lifetime = syn::Lifetime::new("'static", lifetime.span());
                                }
                            }
                        }
                    }
                    // The read-only bound names the impl's own lifetime, so it
                    // is checked where the query is used, not at the impl.
                    let mut bound = nested.clone();
                    if let Some(last) = bound.path.segments.last_mut() {
                        if let PathArguments::AngleBracketed(args) = &mut last.arguments {
                            for arg in args.args.iter_mut() {
                                if let GenericArgument::Lifetime(lifetime) = arg {
                                    *lifetime = syn::Lifetime::new("'__ecs_self", lifetime.span());
                                }
                            }
                        }
                    }
                    read_only.nested.push(quote!(#bound));
                    Ok(quote!(#nested))
                }
                _ => Err(unsupported()),
            }
        }
        Type::Paren(paren) => field_query(&paren.elem, engine, read_only),
        // A type passed through a `macro_rules!` `$t:ty` fragment.
        Type::Group(group) => field_query(&group.elem, engine, read_only),
        _ => Err(unsupported()),
    }
}

/// Whether generic arguments include a lifetime (`Inner<'w>`).
fn has_lifetime(arguments: &PathArguments) -> bool {
    match arguments {
        PathArguments::AngleBracketed(args) => args.args.iter().any(|a| matches!(a, GenericArgument::Lifetime(_))),
        _ => false,
    }
}
