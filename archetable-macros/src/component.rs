//! `#[derive(Component)]` and its `#[component(..)]` options.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Error, Result};

/// The options of `#[component(..)]`.
#[derive(Default)]
struct Options {
    /// `track_changes`: keep added and changed ticks per value.
    track_changes: bool,
    /// `pooled`: reset values that leave the world and keep them for reuse.
    pooled: bool,
}

fn options(input: &DeriveInput) -> Result<Options> {
    let mut options = Options::default();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("component")) {
        attr.parse_nested_meta(|meta| {
            let flag = if meta.path.is_ident("track_changes") {
                &mut options.track_changes
            } else if meta.path.is_ident("pooled") {
                &mut options.pooled
            } else {
                return Err(meta.error("unknown `component` option; expected `track_changes` or `pooled`"));
            };
            if *flag {
                return Err(meta.error("this `component` option is given twice"));
            }
            *flag = true;
            Ok(())
        })?;
    }
    Ok(options)
}

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    if let Some(lifetime) = input.generics.lifetimes().next() {
        return Err(Error::new_spanned(
            lifetime,
            format!(
                "`derive(Component)` needs a `'static` type, but `{}` borrows data for lifetime `{}`; \
                 components are owned by the world, so store owned data (or an `Entity` handle) instead",
                input.ident, lifetime.lifetime
            ),
        ));
    }
    let options = options(&input)?;
    let engine = crate::path::engine();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned().unwrap_or_else(|| syn::parse_quote!(where));
    // For a generic type, state the requirement where it applies; for a
    // concrete one, the trait's own supertraits give the clearer error.
    if input.generics.type_params().next().is_some() {
        where_clause.predicates.push(syn::parse_quote!(Self: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    let track = options.track_changes.then(|| {
        quote!(
            const TRACK_CHANGES: bool = true;
        )
    });
    let pool = options.pooled.then(|| {
        quote!(
            const POOL: ::core::option::Option<#engine::__private::PoolFns<Self>> =
                ::core::option::Option::Some(#engine::__private::PoolFns::<Self>::of());
        )
    });
    let tracked = options.track_changes.then(|| {
        quote! {
            #[automatically_derived]
            impl #impl_generics #engine::Tracked for #name #ty_generics #where_clause {}
        }
    });
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #engine::Component for #name #ty_generics #where_clause {
            #track
            #pool
        }
        #tracked
    })
}
