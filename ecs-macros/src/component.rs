//! `#[derive(Component)]`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Error, Result};

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
    let engine = crate::path::engine();
    let name = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let mut where_clause = where_clause.cloned().unwrap_or_else(|| syn::parse_quote!(where));
    // For a generic type, state the requirement where it applies; for a
    // concrete one, the trait's own supertraits give the clearer error.
    if input.generics.type_params().next().is_some() {
        where_clause.predicates.push(syn::parse_quote!(Self: ::core::marker::Send + ::core::marker::Sync + 'static));
    }
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #engine::Component for #name #ty_generics #where_clause {}
    })
}
