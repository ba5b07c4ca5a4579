//! `#[derive(States)]`: marks an enum as a set of game states. The trait
//! has no items; its supertraits (`Clone`, `Eq`, `Hash`, `Debug`, `Send`,
//! `Sync`, `'static`) come from the user's other derives.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Error, Result};

pub fn derive(input: DeriveInput) -> Result<TokenStream> {
    let name = &input.ident;
    match &input.data {
        Data::Enum(data) if data.variants.is_empty() => {
            return Err(Error::new_spanned(
                name,
                format!("`derive(States)` needs at least one variant: `{name}` has no value to start in"),
            ))
        }
        Data::Enum(_) => {}
        Data::Struct(data) => {
            return Err(Error::new(
                data.struct_token.span,
                format!("`derive(States)` needs an enum, but `{name}` is a struct: each variant is one state"),
            ))
        }
        Data::Union(data) => {
            return Err(Error::new(
                data.union_token.span,
                format!("`derive(States)` needs an enum, but `{name}` is a union"),
            ))
        }
    }
    let engine = crate::path::engine();
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #engine::States for #name #ty_generics #where_clause {}
    })
}
